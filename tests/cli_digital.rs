//! Digital registers as `run --save` writes them and as `trace` shows them, checked
//! against the bits worked out here from the picture.

mod common;

use common::{json, scamp, stderr};
use ndarray::Array2;

/// The bundled default scene as 8-bit grey pixels.
fn camera() -> Array2<u8> {
    let img = image::open("images/camera.png").unwrap().to_luma8();
    assert_eq!(img.dimensions(), (256, 256));
    Array2::from_shape_fn((256, 256), |(r, c)| img.get_pixel(c as u32, r as u32)[0])
}

/// `programs/dnews.scamp` worked out by hand: R5 = p > 160; R7 = R5 grown by one PE
/// north, east, south and west, nothing coming in from outside the array.
fn dnews_bits() -> (Array2<u8>, Array2<u8>) {
    let p = camera();
    let r5 = p.mapv(|v| u8::from(v > 160));
    let at = |r: isize, c: isize| {
        (0..256).contains(&r) && (0..256).contains(&c) && r5[[r as usize, c as usize]] == 1
    };
    let r7 = Array2::from_shape_fn((256, 256), |(r, c)| {
        let (r, c) = (r as isize, c as isize);
        u8::from(at(r, c) || at(r - 1, c) || at(r + 1, c) || at(r, c - 1) || at(r, c + 1))
    });
    (r5, r7)
}

#[test]
fn save_writes_digital_registers_as_bits() {
    let dir = common::temp_dir("digital-save");
    let o = scamp(&[
        "run",
        "programs/dnews.scamp",
        "--noise",
        "ideal",
        "--save",
        "R5,R7,A",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ]);
    let v = json(&o);
    let (r5, r7) = dnews_bits();
    // The grown mask really is larger, so the two files tell R5 and R7 apart.
    let ones = |a: &Array2<u8>| a.iter().filter(|&&b| b == 1).count();
    assert!(ones(&r5) > 100 && ones(&r7) > ones(&r5));
    for (name, want) in [("R5", &r5), ("R7", &r7)] {
        let got: Array2<u8> = ndarray_npy::read_npy(dir.join(format!("{name}.npy"))).unwrap();
        assert_eq!(&got, want, "{name}");
        let png = image::open(dir.join(format!("{name}.png")))
            .unwrap()
            .to_luma8();
        assert!(png.pixels().zip(want.iter()).all(|(p, &b)| p[0] == 255 * b));
        let mean = v["registers"][name]["mean"].as_f64().unwrap();
        assert!((mean - ones(want) as f64 / 65536.0).abs() < 1e-12, "{name}");
    }
    // The analogue register beside them: +100 on the grown mask, -100 elsewhere.
    let a: Array2<f32> = ndarray_npy::read_npy(dir.join("A.npy")).unwrap();
    assert_eq!(a, r7.mapv(|b| if b == 1 { 100.0 } else { -100.0 }));
}

/// The value of column `name` in the last row of a trace table.
fn last_value(out: &str, name: &str) -> String {
    let lines: Vec<&str> = out.lines().collect();
    let header: Vec<&str> = lines[1].split_whitespace().collect();
    let table_end = lines.iter().position(|l| l.is_empty()).unwrap();
    let last: Vec<&str> = lines[table_end - 1].split_whitespace().collect();
    // Columns are right-aligned values; count them from the right.
    let from_right = header.len() - 1 - header.iter().position(|h| *h == name).unwrap();
    last[last.len() - 1 - from_right].to_string()
}

#[test]
fn trace_shows_the_digital_registers_a_program_touches() {
    let (r5, r7) = dnews_bits();
    // A PE in R5, one only in the grown border of R7, and one in neither.
    let find = |f: &dyn Fn(usize, usize) -> bool| {
        (1..255)
            .flat_map(|r| (1..255).map(move |c| (r, c)))
            .find(|&(r, c)| f(r, c))
            .unwrap()
    };
    let pes = [
        find(&|r, c| r5[[r, c]] == 1),
        find(&|r, c| r5[[r, c]] == 0 && r7[[r, c]] == 1),
        find(&|r, c| r7[[r, c]] == 0),
    ];
    for (r, c) in pes {
        let o = scamp(&["trace", "programs/dnews.scamp", "--pe", &format!("{r},{c}")]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        let header = out.lines().nth(1).unwrap();
        assert!(
            header
                .trim_end()
                .ends_with("R1  R2  R3  R4  R5  R6  R7  FLAG"),
            "{header}"
        );
        assert_eq!(last_value(&out, "R5"), r5[[r, c]].to_string(), "({r},{c})");
        assert_eq!(last_value(&out, "R7"), r7[[r, c]].to_string(), "({r},{c})");
        assert_eq!(last_value(&out, "R1"), "1");
        assert_eq!(last_value(&out, "FLAG"), "1");
    }
    // A program without digital instructions shows FLAG only.
    let o = scamp(&["trace", "programs/gauss3x3_hand.scamp", "--pe", "5,5"]);
    let out = String::from_utf8_lossy(&o.stdout);
    let header = out.lines().nth(1).unwrap();
    assert!(header.trim_end().ends_with("XW  FLAG"), "{header}");
}
