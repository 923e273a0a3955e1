//! Multi-channel kernel sets on the command line: a bank of six kernels over three inputs
//! is compiled into groups, says how it split, and `check` reports which kernels went
//! to which group, each verified. The generator's own tests of multi-input sets are in
//! the library (`crates/scamp/src/cain/tests/channels.rs`).

/// Six kernels over three inputs in six registers: too many for one program (the
/// library's own tests' file, so that the set is written once).
const SIX_KERNELS_OVER_THREE_INPUTS: &str =
    include_str!("../crates/scamp/src/cain/tests/six_kernels.yaml");

#[test]
fn a_bank_over_three_inputs_says_how_it_split_and_checks_by_group() {
    let bank = SIX_KERNELS_OVER_THREE_INPUTS;
    let line = "split by kernel into 3 groups of at most 2 kernels: the fewest whose constructive \
         programs fit 6 registers, 3 of them holding the inputs";
    // compile prints how the bank split on stderr.
    let dir = std::env::temp_dir().join(format!("scamp-channels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("bank.yaml");
    std::fs::write(
        &path,
        bank.replace("inputs:", "search: { work: 300, workers: 1 }\ninputs:"),
    )
    .expect("written");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_scamp"))
        .arg("compile")
        .arg(&path)
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains(line), "{stderr}");
    // check says which kernels went to which group, each group proven from every input.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_scamp"))
        .args([
            "check",
            &path.to_string_lossy(),
            "--noise",
            "ideal",
            "--json",
        ])
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["verified"], true);
    let groups: Vec<(serde_json::Value, serde_json::Value)> = v["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| (g["kernels"].clone(), g["outs"].clone()))
        .collect();
    assert_eq!(
        groups,
        [
            (serde_json::json!([1, 2]), serde_json::json!(["D", "E"])),
            (serde_json::json!([3, 4]), serde_json::json!(["F", "D"])),
            (serde_json::json!([5, 6]), serde_json::json!(["E", "F"])),
        ]
    );
    for k in v["kernels"].as_array().expect("kernels") {
        assert_eq!(k["analogue"]["rmse"], 0.0);
    }
}
