//! The library front door (`scamp::Bank` and its run API) against the command line:
//! the same description of a run gives the same planes bit for bit, the reports
//! serialise to what the commands print, and bad planes are refused with a reason.

mod common;

use common::{json, scamp, temp_dir};
use ndarray::Array2;
use scamp::{InputError, PlaneValues, Preload, RunOptions, Setup};

use scamp::{isa::parse_program, isa::Device};

use scamp::Profile;
use scamp::{Bank, CheckOptions};
use scamp::{ProfileTestbed, Watched};

fn program(path: &str) -> scamp::isa::Program {
    let text = std::fs::read_to_string(path).unwrap();
    parse_program(&text, Device::default()).unwrap()
}

#[test]
fn batch_frames_equal_the_cli_runs_bit_for_bit() {
    let p = program("programs/gauss3x3_hand.scamp");
    let setup = Setup::new(scamp::default_image());
    let mut opts = RunOptions::new(Profile::builtin("scamp5").unwrap());
    opts.seed = 4;
    opts.chip_seed = 9;
    let a = Watched::parse("A", 6).unwrap();
    let frames = scamp::run_batch(&p, &[setup.clone(), setup], &opts, &[a]).expect("runs");
    for (i, frame) in frames.iter().enumerate() {
        let dir = temp_dir(&format!("bank-cli-{i}"));
        let seed = (4 + i).to_string();
        let o = scamp(&[
            "run",
            "programs/gauss3x3_hand.scamp",
            "--seed",
            &seed,
            "--chip-seed",
            "9",
            "--save",
            "A",
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
        let cli: Array2<f32> = ndarray_npy::read_npy(dir.join("A.npy")).unwrap();
        let lib = &frame.planes[0].1;
        assert!(
            cli.iter().zip(lib).all(|(x, y)| x.to_bits() == y.to_bits()),
            "frame {i} differs from the CLI's run with seed {seed}"
        );
    }
    // Frames with different seeds differ: the batch really steps its seeds.
    assert_ne!(frames[0].planes[0].1, frames[1].planes[0].1);
}

#[test]
fn check_report_serialises_to_the_cli_json() {
    let spec =
        scamp::parse_spec(&std::fs::read_to_string("programs/gauss3x3.yaml").unwrap()).unwrap();
    let text = std::fs::read_to_string("programs/gauss3x3.scamp").unwrap();
    let p = parse_program(&text, Device::default()).unwrap();
    let bank = Bank::with_kernels(p, &text, spec).unwrap();
    let images: Vec<_> = scamp::load_images(std::path::Path::new("images"))
        .unwrap()
        .into_iter()
        .map(|(_, g)| g)
        .collect();
    let testbed = ProfileTestbed {
        profile: Profile::builtin("scamp5").unwrap(),
        chip_seed: 1,
        seed: 1,
    };
    let opts = CheckOptions::new("scamp5").with_runs(2);
    let lib = serde_json::to_string(&bank.check(&images, &testbed, &opts).unwrap().report).unwrap();
    let out = scamp(&[
        "check",
        "programs/gauss3x3.scamp",
        "--kernel",
        "programs/gauss3x3.yaml",
        "--runs",
        "2",
        "--json",
    ]);
    // The command prints the library's report, byte for byte.
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end(), lib);
    let v = json(&out);
    assert_eq!(v["verified"], true);
    assert!(v["saturated_share"].as_f64().unwrap() <= 1.0);
}

#[test]
fn bare_programs_have_no_kernels_to_prove() {
    let bank = Bank::bare(program("programs/identity.scamp"));
    let e = bank.prove().unwrap_err().to_string();
    assert!(e.contains("--kernel"), "{e}");
}

#[test]
fn bad_planes_are_refused_with_their_position() {
    let wide = Array2::<f32>::zeros((256, 255));
    let e = PlaneValues::analogue("A", wide.view()).unwrap_err();
    assert_eq!(e.to_string(), "A: expected a 256x256 plane, got 256x255");
    let mut nan = Array2::<f32>::zeros((256, 256));
    nan[[3, 4]] = f32::NAN;
    assert!(matches!(
        PlaneValues::analogue("A", nan.view()),
        Err(InputError::NotFinite { row: 3, col: 4, .. })
    ));
    let mut big = Array2::<f32>::zeros((256, 256));
    big[[0, 1]] = 2000.0;
    let e = PlaneValues::analogue("B", big.view())
        .unwrap_err()
        .to_string();
    assert!(e.contains("outside the register range -1024..1024"), "{e}");
    let mut bits = Array2::<u8>::zeros((256, 256));
    bits[[255, 255]] = 2;
    assert!(matches!(
        PlaneValues::bits("R1", bits.view()),
        Err(InputError::NotBit {
            row: 255,
            col: 255,
            ..
        })
    ));
    let zeros = PlaneValues::Analogue(vec![0.0; 65536]);
    let e = Preload::new("G", 6, zeros.clone()).unwrap_err().to_string();
    assert_eq!(
        e,
        "unknown register `G` (expected A..F, NEWS, R0..R12 or FLAG)"
    );
    let half = PlaneValues::Analogue(vec![0.5; 65536]);
    assert!(Preload::new("R3", 6, half).is_err());
    let one = Preload::new("R3", 6, PlaneValues::Analogue(vec![1.0; 65536])).unwrap();
    assert_eq!(one.values, PlaneValues::Bits(vec![1; 65536]));
}

#[test]
fn preloads_and_input_prepare_the_array_in_order() {
    let mut setup = Setup::new(scamp::default_image());
    setup
        .preloads
        .push(Preload::new("B", 6, PlaneValues::Analogue(vec![5.0; 65536])).unwrap());
    setup
        .preloads
        .push(Preload::new("B", 6, PlaneValues::Analogue(vec![7.0; 65536])).unwrap());
    setup
        .preloads
        .push(Preload::new("R2", 6, PlaneValues::Bits(vec![1; 65536])).unwrap());
    setup.input = Some(scamp::isa::Reg::A);
    let array = setup.array();
    assert!(array
        .plane(scamp::isa::Reg::B)
        .unwrap()
        .iter()
        .all(|&v| v == 7.0));
    let px = scamp::default_image().pixels;
    assert_eq!(
        array.plane(scamp::isa::Reg::A).unwrap()[1000],
        f32::from(px[1000]) - 128.0
    );
    assert!(array
        .bits(scamp::isa::DReg::parse("R2").unwrap())
        .iter()
        .all(|&b| b == 1));
}
