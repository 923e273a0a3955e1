//! Banks on the command line: oversized kernels are refused with positions before any
//! work, and two kernels into one register make two proven blocks that `check`
//! verifies. The generator's own tests of banks and budgets are in the library
//! (`crates/scamp/src/cain/tests/banks.rs`).

mod common;

/// Kernels beyond the accepted size, and bad weights in a large one, are refused with
/// the position of the offending value, exit code 2, before any work.
#[test]
fn oversized_and_bad_large_kernels_are_refused_with_positions() {
    let rows = |n: usize, bad: Option<(usize, usize)>| -> String {
        (0..n)
            .map(|i| {
                let row: Vec<String> = (0..n)
                    .map(|j| {
                        if bad == Some((i, j)) {
                            "x".to_string()
                        } else {
                            ((i + j) % 5).to_string()
                        }
                    })
                    .collect();
                format!("      - [{}]\n", row.join(", "))
            })
            .collect()
    };
    let cases = [
        (rows(32, None), "rows of weights"),
        (rows(31, Some((30, 17))), "not a number"),
    ];
    for (i, (weights, says)) in cases.iter().enumerate() {
        let text = format!("kernels:\n  - out: A\n    weights:\n{weights}");
        let path = common::temp_file("large", &format!("bad{i}.yaml"), &text);
        let o = common::scamp(&["compile", path.to_str().expect("utf-8 path")]);
        let err = common::stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        let line = err.lines().next().unwrap_or_default();
        let at = format!("error: {}:", path.display());
        assert!(line.starts_with(&at), "{line}");
        assert!(line.contains(says), "{line}");
        if i == 1 {
            // Row 31 of the weights is line 34 (three lines above the first row); the
            // bad value is the 18th of its row, each before it three columns wide.
            let col = 10 + 17 * 3;
            assert!(line.contains(&format!(":34:{}", col)), "{line}");
        }
    }
}

#[test]
fn two_kernels_into_one_register_make_two_proven_blocks() {
    // The docs (spec-format.md, `kernels`): two kernels with the same `out` make a bank.
    let dir = common::temp_dir("dup_out");
    let spec = dir.join("dup.yaml");
    std::fs::write(
        &spec,
        "name: dup\nkernels:\n  - {out: A, scale: 1/4, weights: [[1, 2, 1]]}\n  \
         - {out: A, scale: 1/4, weights: [[1], [2], [1]]}\n",
    )
    .expect("write");
    let (spec, prog) = (spec.to_str().expect("utf-8"), dir.join("dup.scamp"));
    let prog = prog.to_str().expect("utf-8");
    let o = common::scamp(&["compile", spec, "--work", "20", "-o", prog]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let text = std::fs::read_to_string(prog).expect("program written");
    assert_eq!(text.matches("scamp5_kernel_begin();").count(), 2, "{text}");
    assert!(text.contains("2 groups, each from the input, outputs read out after each: [A], [A]"));
    let images = format!("{}/images", env!("CARGO_MANIFEST_DIR"));
    let check = |p: &str| {
        common::scamp(&[
            "check", p, "--kernel", spec, "--images", &images, "--noise", "ideal", "--json",
        ])
    };
    let o = check(prog);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let j = common::json(&o);
    assert_eq!(j["verified"], true);
    assert_eq!(j["kernels"].as_array().map(Vec::len), Some(2));
    for k in j["kernels"].as_array().into_iter().flatten() {
        assert_eq!(k["total"]["rmse"].as_f64(), Some(0.0), "{k}");
    }
    // Each block is proven against its own kernel: the first block twice computes the
    // first kernel twice, and the check fails.
    let (begin, end) = ("scamp5_kernel_begin();", "scamp5_kernel_end();");
    let first = text
        .find(begin)
        .and_then(|b| text[b..].find(end).map(|e| &text[b..b + e + end.len()]))
        .expect("a first block");
    let wrong = dir.join("wrong.scamp");
    std::fs::write(&wrong, format!("{first}\n{first}\n")).expect("write");
    let o = check(wrong.to_str().expect("utf-8"));
    assert_eq!(o.status.code(), Some(1), "{}", common::stderr(&o));
    // The spec form of check compiles and proves the same bank.
    let o = common::scamp(&[
        "check", spec, "--work", "20", "--images", &images, "--noise", "ideal", "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let j = common::json(&o);
    assert_eq!(j["verified"], true);
    let program = j["program"].as_str().unwrap_or_default();
    assert_eq!(program.matches("scamp5_kernel_begin();").count(), 2);
}
