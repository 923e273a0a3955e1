//! Property tests of every file reader's size check: a file of any size and content is
//! refused or read within a memory bound proportional to what it really holds (never
//! to what a header claims, nor past the reader's limit), measured by an allocator that
//! counts the peak of live bytes during the read. Also `/dev/zero`, which never ends.
//! (Moved from the command's `tests/`: the limits and the IDX and `.npy` readers are
//! not the library's surface. The counting allocator is this test binary's.)

use crate::eval::idx::read as read_idx;
use crate::eval::network::{Source, MAX_NETWORK_BYTES};
use crate::isa::{self, MAX_PROFILE_BYTES, MAX_PROGRAM_BYTES, MAX_SPEC_BYTES};
use crate::sim::readout::npy::{npy_bytes, read_matrix, MAX_NPY_HEADER};
use proptest::prelude::*;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::{Path, PathBuf};

/// The system allocator, counting each thread's live bytes and their peak: the readers
/// run on the calling thread, and other tests of this binary allocate their inputs on
/// theirs at the same time, which a process-wide count would charge to the reader.
struct Counting;

thread_local! {
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

/// Adds `grown` bytes to this thread's live count (and its peak), or takes `shrunk` off.
fn count(grown: usize, shrunk: usize) {
    // `try_with`: allocations while the thread's locals are torn down are not counted.
    let _ = LIVE.try_with(|live| {
        let now = (live.get() + grown).saturating_sub(shrunk);
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            count(l.size(), 0);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        count(0, l.size());
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = System.realloc(p, l, new);
        if !q.is_null() {
            count(new.saturating_sub(l.size()), l.size().saturating_sub(new));
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The peak of extra live bytes on this thread while `f` runs.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let out = f();
    (out, PEAK.with(Cell::get).saturating_sub(base))
}

/// What a reader may hold for a file of `len` bytes with limit `limit`: a few times
/// what it reads, plus a fixed allowance for buffers and messages.
fn bound(len: usize, limit: u64) -> usize {
    3 * len.min(limit as usize + 1) + (2 << 20)
}

fn file_with(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("scamp-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join(name);
    std::fs::write(&f, bytes).unwrap();
    f
}

/// Contents of any length up to `max` (mostly short, some past the limits), random
/// bytes or one byte repeated.
fn contents(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..4096),
        (0..max, any::<u8>()).prop_map(|(n, b)| vec![b; n]),
    ]
}

fn text_readers() -> [(&'static str, u64); 3] {
    [
        ("spec", MAX_SPEC_BYTES),
        ("program", MAX_PROGRAM_BYTES),
        ("profile", MAX_PROFILE_BYTES),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn text_files_are_refused_or_read_within_their_limit(bytes in contents(6 << 20)) {
        let f = file_with("text", &bytes);
        for (what, limit) in text_readers() {
            let (r, peak) = peak_of(|| isa::read_text(&f, limit, what));
            prop_assert!(peak <= bound(bytes.len(), limit), "{what}: {peak} bytes for a {}-byte file", bytes.len());
            if bytes.len() as u64 > limit {
                prop_assert!(matches!(r, Err(isa::SourceError::TooLarge { .. })), "{what}");
            }
        }
    }

    #[test]
    fn network_files_are_refused_or_read_within_their_limit(bytes in contents(3 << 20)) {
        let f = file_with("net.yaml", &bytes);
        let dir = f.parent().unwrap();
        let (r, peak) = peak_of(|| Source::Dir(dir).read("net.yaml"));
        let limit = MAX_NETWORK_BYTES as u64;
        prop_assert!(peak <= bound(bytes.len(), limit), "{peak} bytes for a {}-byte file", bytes.len());
        if bytes.len() as u64 > limit {
            prop_assert!(r.is_err());
        }
    }

    #[test]
    fn idx_files_hold_what_they_hold_whatever_the_header_claims(
        dims in prop::collection::vec(any::<u32>(), 1..5),
        tail in contents(2 << 20),
    ) {
        let bytes = idx_bytes(&dims, &tail);
        let f = file_with("idx", &bytes);
        let (r, peak) = peak_of(|| read_idx(&f, &|_| Ok(())));
        prop_assert!(peak <= bound(bytes.len(), u64::MAX / 4), "{peak} bytes for a {}-byte file claiming {dims:?}", bytes.len());
        if let Ok(x) = r {
            prop_assert_eq!(x.data.len() as u64, dims.iter().map(|&d| u64::from(d)).product::<u64>());
        }
    }

    #[test]
    fn npy_files_are_checked_before_what_their_header_claims(
        rows in any::<u64>(),
        cols in any::<u64>(),
        tail in contents(2 << 20),
    ) {
        let bytes = npy_bytes("<f4", &format!("({rows}, {cols})"), &tail);
        let f = file_with("w.npy", &bytes);
        let (r, peak) = peak_of(|| read_matrix(&f, [10, 148]));
        let limit = (12 + MAX_NPY_HEADER + 10 * 148 * 8) as u64;
        prop_assert!(peak <= bound(bytes.len(), limit), "{peak} bytes for a {}-byte file", bytes.len());
        prop_assert_eq!(r.is_ok(), (rows, cols) == (10, 148) && tail.len() >= 10 * 148 * 4);
    }
}

#[test]
fn an_endless_file_is_read_to_the_limit_only() {
    let zero = Path::new("/dev/zero");
    for (what, limit) in text_readers() {
        let (r, peak) = peak_of(|| isa::read_text(zero, limit, what));
        assert!(
            matches!(r, Err(isa::SourceError::TooLarge { .. })),
            "{what}"
        );
        assert!(peak <= 3 * limit as usize + (2 << 20), "{what}: {peak}");
    }
    let (r, peak) = peak_of(|| Source::Dir(Path::new("/dev")).read("zero"));
    assert!(r.is_err());
    assert!(peak <= 3 * MAX_NETWORK_BYTES + (2 << 20), "{peak}");
    let (r, _) = peak_of(|| read_idx(zero, &|_| Ok(())));
    assert_eq!(
        r.unwrap_err().to_string(),
        "cannot read: not a regular file (a device)"
    );
}

/// An IDX file of unsigned bytes with dimensions `dims`, then `data`.
fn idx_bytes(dims: &[u32], data: &[u8]) -> Vec<u8> {
    let mut b = vec![0, 0, 8, dims.len() as u8];
    for d in dims {
        b.extend_from_slice(&d.to_be_bytes());
    }
    b.extend_from_slice(data);
    b
}
