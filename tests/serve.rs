//! `scamp serve` over a real socket: the page, the JSON API, refusals with reasons,
//! users isolated from each other, a runaway program cut short, and grading with the
//! figures `scamp check` prints.

mod common;
mod serve_support;

use serde_json::json;
use serve_support::Serve;

/// The value of `reg` at the selected PE in run `run` of a `/api/run` answer.
fn pe_value(reply: &serde_json::Value, run: usize, reg: &str) -> f64 {
    reply["runs"][run]["pe"][0]["values"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == reg)
        .and_then(|v| v["value"].as_f64())
        .unwrap_or_else(|| panic!("no {reg} in {}", reply["runs"][run]["pe"][0]))
}

#[test]
fn the_page_is_served_self_contained() {
    let s = Serve::start();
    let (status, body) = s.request("GET", "/?program=add(A%2C%20A%2C%20B)", b"");
    assert_eq!(status, 200);
    let page = String::from_utf8(body).unwrap();
    assert!(page.contains("id=\"editor\"") && page.contains("02-gradient"));
    for bad in ["http://", "https://", "<link", "@import", " src=\""] {
        assert!(!page.contains(bad), "the page contains `{bad}`");
    }
}

#[test]
fn bad_requests_get_a_4xx_with_a_reason_and_the_server_lives_on() {
    let s = Serve::start();
    let cases: Vec<(&str, &str, Vec<u8>, u16, &str)> = vec![
        ("POST", "/api/run", b"{".to_vec(), 400, "bad request body"),
        (
            "POST",
            "/api/run",
            br#"{"program": 5}"#.to_vec(),
            400,
            "bad request body",
        ),
        (
            "POST",
            "/api/run",
            br#"{"program": "add(A, A, B)", "inputs": "A = 99999"}"#.to_vec(),
            400,
            "outside the register range",
        ),
        (
            "POST",
            "/api/run",
            br#"{"program": "add(A, A, B)", "image": "../../etc/passwd"}"#.to_vec(),
            400,
            "not bundled",
        ),
        (
            "POST",
            "/api/grade",
            br#"{"exercise": "nope", "program": ""}"#.to_vec(),
            404,
            "no exercise",
        ),
        ("GET", "/api/run", Vec::new(), 405, "not allowed"),
        ("GET", "/secret", Vec::new(), 404, "nothing at"),
        (
            "POST",
            "/api/parse",
            vec![b'x'; 9 * 1024 * 1024],
            413,
            "at most 4194304 bytes, as in the CLI",
        ),
    ];
    for (method, path, body, want, reason) in cases {
        let (status, answer) = s.request(method, path, &body);
        let text = String::from_utf8_lossy(&answer);
        assert_eq!(status, want, "{method} {path}: {text}");
        assert!(text.contains(reason), "{method} {path}: {text}");
    }
    let (status, _) = s.post("/api/parse", &json!({"program": "add(A, A, B)"}));
    assert_eq!(status, 200, "still answering");
}

#[test]
fn concurrent_users_see_only_their_own_program() {
    let s = Serve::start();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..6)
            .map(|k| {
                let s = &s;
                scope.spawn(move || {
                    let program = format!("// user {k}\nadd(B, A, C);\n");
                    let (status, r) = s.post(
                        "/api/run",
                        &json!({"program": program, "inputs": format!("A = {k}, C = {k}"), "noise": "ideal"}),
                    );
                    assert_eq!(status, 200, "{r}");
                    (k, pe_value(&r, 0, "B"), pe_value(&r, 1, "B"))
                })
            })
            .collect();
        for h in handles {
            let (k, ideal, noisy) = h.join().unwrap();
            assert_eq!(ideal, 2.0 * k as f64, "user {k}");
            assert_eq!(noisy, 2.0 * k as f64, "user {k}: the ideal profile twice");
        }
    });
}

#[test]
fn a_runaway_program_is_bounded_and_says_so() {
    let s = Serve::start();
    // 200,000 macros of 5 bus instructions: a million, under the 4 MiB limit.
    let program = "diva(A, E, F)\n".repeat(200_000);
    let (status, r) = s.post("/api/run", &json!({"program": program}));
    assert_eq!(status, 200);
    let cut = r["truncated"]
        .as_str()
        .expect("the reply says it stopped early");
    assert!(cut.contains("at most 20000"), "{cut}");
    assert!(r["steps"].as_array().unwrap().len() < 20_000);
    assert_eq!(r["instructions"], 200_000);
    assert_eq!(r["cycles"], 1_000_000);
}

#[test]
fn grading_gives_the_proof_and_the_figures_of_check() {
    let s = Serve::start();
    let root = env!("CARGO_MANIFEST_DIR");
    let solution =
        std::fs::read_to_string(format!("{root}/tests/exercises/02-gradient.scamp")).unwrap();
    let (status, r) = s.post(
        "/api/grade",
        &json!({"exercise": "02-gradient", "program": solution}),
    );
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["verified"], true, "{r}");
    let cli = common::json(&common::scamp(&[
        "check",
        "tests/exercises/02-gradient.scamp",
        "--kernel",
        "docs/tutorial/exercises/02-gradient/spec.yaml",
        "--json",
    ]));
    for fig in ["approx", "analogue"] {
        for f in ["rmse", "bias", "max"] {
            assert_eq!(
                r["kernels"][0][fig][f], cli["kernels"][0][fig][f],
                "{fig} {f}: page {} cli {}",
                r["kernels"][0][fig], cli["kernels"][0][fig]
            );
        }
    }
    assert_eq!(
        r["kernels"][0]["total"]["rmse"],
        cli["kernels"][0]["total"]["rmse"]
    );
    assert_eq!(r["cycles"], cli["cycles"]);
    assert_eq!(r["border"], cli["border"]);

    let starter = std::fs::read_to_string(format!(
        "{root}/docs/tutorial/exercises/02-gradient/starter.scamp"
    ))
    .unwrap();
    let (_, r) = s.post(
        "/api/grade",
        &json!({"exercise": "02-gradient", "program": starter}),
    );
    assert_eq!(r["verified"], false);
    let g = &r["grids"][0];
    assert_eq!(g["register"], "A", "{r}");
    assert_ne!(g["expected"], g["computed"]);
}

#[test]
fn the_tutorial_is_served_and_the_macro_list_names_each_macro_once() {
    let s = Serve::start();
    let (status, page) = s.request("GET", "/tutorial", b"");
    assert_eq!(status, 200);
    let page = String::from_utf8(page).unwrap();
    assert!(page.contains("<a href=\"01-pe-array.md\">"), "{page}");
    let (status, chapter) = s.request("GET", "/tutorial/04-flag.md", b"");
    assert_eq!(status, 200);
    let chapter = String::from_utf8(chapter).unwrap();
    assert!(chapter.contains("open in the playground") && chapter.contains("/?program="));
    assert_eq!(s.request("GET", "/tutorial/nope.md", b"").0, 404);

    let (_, page) = s.request("GET", "/", b"");
    let page = String::from_utf8(page).unwrap();
    let data = page
        .split("<script id=\"page-data\" type=\"application/json\">")
        .nth(1)
        .and_then(|rest| rest.split("</script>").next())
        .expect("the page data");
    let data: serde_json::Value = serde_json::from_str(data).unwrap();
    let names: Vec<&str> = data["macros"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    for name in ["SET", "CLR", "OR", "NOR", "add", "where"] {
        let count = names.iter().filter(|n| **n == name).count();
        assert_eq!(count, 1, "{name} in {names:?}");
    }
}
