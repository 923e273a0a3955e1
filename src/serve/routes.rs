//! Requests to answers, without sockets: the page, the JSON API and the refusals, so
//! the whole protocol is testable as plain function calls.

use super::api::{ErrorReply, GradeRequest, ParseReply, ParseRequest, RunRequest};
use super::{exercises, page, session, tutorial, Refusal};
use scamp::isa::MAX_PROGRAM_BYTES;
use serde::{de::DeserializeOwned, Serialize};

/// Largest request body read: a program at the CLI's limit, JSON-escaped (a new line
/// becomes two bytes), and room for the other fields.
pub const MAX_BODY_BYTES: u64 = 2 * MAX_PROGRAM_BYTES + 65_536;

/// An answer: status, content type and body.
#[derive(Debug)]
pub struct Reply {
    /// HTTP status code.
    pub status: u16,
    /// `Content-Type` header value.
    pub content_type: &'static str,
    /// The body.
    pub body: Vec<u8>,
}

const JSON: &str = "application/json; charset=utf-8";

fn json<T: Serialize>(status: u16, value: &T) -> Reply {
    match serde_json::to_vec(value) {
        Ok(body) => Reply {
            status,
            content_type: JSON,
            body,
        },
        Err(e) => refused(&Refusal {
            status: 500,
            msg: format!("cannot encode the answer: {e}"),
        }),
    }
}

/// The refusal of a body over [`MAX_BODY_BYTES`] (413).
pub fn too_big() -> Refusal {
    Refusal {
        status: 413,
        msg: format!(
            "request body over {MAX_BODY_BYTES} bytes (a program may have at most {MAX_PROGRAM_BYTES} bytes, as in the CLI)"
        ),
    }
}

/// A refusal as JSON `{"error": "..."}` with its status.
pub fn refused(r: &Refusal) -> Reply {
    let body = serde_json::to_vec(&ErrorReply {
        error: r.msg.clone(),
    })
    .unwrap_or_default();
    Reply {
        status: r.status,
        content_type: JSON,
        body,
    }
}

fn body_of<T: DeserializeOwned>(body: &[u8]) -> Result<T, Refusal> {
    serde_json::from_slice(body).map_err(|e| Refusal::bad(format!("bad request body: {e}")))
}

fn answer<T: Serialize>(r: Result<T, Refusal>) -> Reply {
    match r {
        Ok(v) => json(200, &v),
        Err(e) => refused(&e),
    }
}

fn parse(body: &[u8]) -> Result<ParseReply, Refusal> {
    let req: ParseRequest = body_of(body)?;
    Ok(match session::parse(&req.program)? {
        Ok(p) => ParseReply {
            errors: Vec::new(),
            instructions: p.instructions(),
            cycles: p.cycles(),
        },
        Err(d) => ParseReply {
            errors: vec![d],
            instructions: 0,
            cycles: 0,
        },
    })
}

/// Answers one request. `path` may carry a query (the page reads its own).
pub fn route(method: &str, path: &str, body: &[u8]) -> Reply {
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    match (method, path) {
        ("GET", "/") | ("GET", "/index.html") => Reply {
            status: 200,
            content_type: "text/html; charset=utf-8",
            body: page::html().into_bytes(),
        },
        ("GET", "/api/exercises") => json(200, &exercises::list()),
        ("GET", p) if p == "/tutorial" || p.starts_with("/tutorial/") => match tutorial::page(p) {
            Some(html) => Reply {
                status: 200,
                content_type: "text/html; charset=utf-8",
                body: html.into_bytes(),
            },
            None => refused(&Refusal {
                status: 404,
                msg: format!("no tutorial chapter at {p}"),
            }),
        },
        ("POST", "/api/parse") => answer(parse(body)),
        ("POST", "/api/run") => answer(body_of::<RunRequest>(body).and_then(|r| session::run(&r))),
        ("POST", "/api/grade") => {
            answer(body_of::<GradeRequest>(body).and_then(|r| exercises::grade(&r)))
        }
        (_, "/" | "/index.html" | "/api/exercises" | "/api/parse" | "/api/run" | "/api/grade") => {
            refused(&Refusal {
                status: 405,
                msg: format!("{method} is not allowed on {path}"),
            })
        }
        _ => refused(&Refusal {
            status: 404,
            msg: format!("nothing at {path}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(r: &Reply) -> String {
        let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        v["error"].as_str().unwrap().to_string()
    }

    #[test]
    fn bad_requests_get_a_4xx_and_a_reason() {
        let r = route("POST", "/api/run", b"{not json");
        assert_eq!(r.status, 400);
        assert!(error_of(&r).starts_with("bad request body"));
        let r = route("POST", "/api/run", br#"{"program": "", "bogus": 1}"#);
        assert_eq!(r.status, 400);
        assert!(error_of(&r).contains("bogus"));
        assert_eq!(route("GET", "/nowhere", b"").status, 404);
        assert_eq!(route("DELETE", "/api/run", b"").status, 405);
        let big = serde_json::json!({ "program": "x".repeat(MAX_PROGRAM_BYTES as usize + 1) });
        let r = route("POST", "/api/parse", big.to_string().as_bytes());
        assert_eq!(r.status, 413);
        assert!(error_of(&r).contains("as in the CLI"));
    }

    #[test]
    fn parse_gives_the_error_position_and_the_page_is_self_contained() {
        let r = route(
            "POST",
            "/api/parse",
            br#"{"program": "add(A, A, B);\nfoo(A);"}"#,
        );
        assert_eq!(r.status, 200);
        let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(v["errors"][0]["line"], 2);
        assert_eq!(v["errors"][0]["col"], 1);
        let page = String::from_utf8(route("GET", "/?program=add(A%2CA%2CB)", b"").body).unwrap();
        assert!(page.contains("<script>") && page.contains("id=\"editor\""));
        for bad in ["http://", "https://", "<link", "@import", " src=\""] {
            assert!(!page.contains(bad), "the page contains `{bad}`");
        }
    }
}
