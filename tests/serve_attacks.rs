//! `scamp serve` under hostile clients, each attack driven against a running server on
//! 127.0.0.1 while a normal client is answered in bounded time, the server's memory
//! bounded: a header line without end, bodies that never come, bodies declared too
//! big, requests from other sites (DNS rebinding, `text/plain` posts), too many
//! connections from one client, and binding beyond loopback.

mod serve_support;

use serde_json::json;
use serve_support::Serve;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A normal user's requests, each answered correctly within `limit`.
fn normal_client_is_answered(s: &Serve, limit: Duration) {
    let t = Instant::now();
    let (status, page) = s.request("GET", "/", b"");
    assert_eq!(status, 200);
    assert!(String::from_utf8_lossy(&page).contains("id=\"editor\""));
    let (status, r) = s.post("/api/parse", &json!({"program": "add(A, A, B);"}));
    assert_eq!((status, &r["instructions"]), (200, &json!(1)), "{r}");
    assert!(t.elapsed() < limit, "answered after {:?}", t.elapsed());
}

fn connect(s: &Serve) -> TcpStream {
    let c = TcpStream::connect(&s.addr).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(15))).ok();
    c.set_write_timeout(Some(Duration::from_secs(15))).ok();
    c
}

/// The status line's code of what `c` receives, or None when the connection was
/// closed or reset without an answer.
fn status_of(c: &mut TcpStream) -> Option<u16> {
    let mut raw = Vec::new();
    let _ = c.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw);
    text.strip_prefix("HTTP/1.1 ")?.get(..3)?.parse().ok()
}

/// The whole answer to a raw request `head` (and `body`), as text.
fn raw_answer(s: &Serve, head: &str, body: &[u8]) -> String {
    let mut c = connect(s);
    c.write_all(head.as_bytes()).unwrap();
    let _ = c.write_all(body);
    let mut raw = Vec::new();
    let _ = c.read_to_end(&mut raw);
    String::from_utf8_lossy(&raw).into_owned()
}

#[test]
fn a_header_line_without_end_is_cut_off_with_bounded_memory() {
    let s = Serve::start();
    normal_client_is_answered(&s, Duration::from_secs(5));
    let before = s.rss_bytes();
    // A line over the head limit, then silence: the answer is 431, sent at once.
    let mut c = connect(&s);
    c.write_all(b"GET / HTTP/1.1\r\nX-A: ").unwrap();
    c.write_all(&[b'a'; 40 * 1024]).unwrap();
    assert_eq!(status_of(&mut c), Some(431));
    // Four clients each try to send 256 MiB of one header line; the server stops
    // reading them after its limit, so they cannot send it all.
    let sent: Vec<u64> = std::thread::scope(|scope| {
        let attackers: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    let mut c = connect(&s);
                    c.set_write_timeout(Some(Duration::from_secs(3))).ok();
                    let chunk = vec![b'a'; 64 * 1024];
                    let mut sent = c.write(b"GET / HTTP/1.1\r\nX-A: ").unwrap_or(0) as u64;
                    while sent < 256 << 20 {
                        match c.write(&chunk) {
                            Ok(n) if n > 0 => sent += n as u64,
                            _ => break,
                        }
                    }
                    sent
                })
            })
            .collect();
        normal_client_is_answered(&s, Duration::from_secs(5));
        attackers.into_iter().map(|a| a.join().unwrap()).collect()
    });
    for n in sent {
        assert!(n < 64 << 20, "the server read {n} bytes of one header line");
    }
    let grown = s.rss_bytes().saturating_sub(before);
    assert!(grown < 48 << 20, "the server grew by {grown} bytes");
    normal_client_is_answered(&s, Duration::from_secs(5));
}

#[test]
fn slow_bodies_do_not_stall_other_clients_and_time_out() {
    let s = Serve::start();
    let started = Instant::now();
    let mut slow: Vec<TcpStream> = (0..8)
        .map(|_| {
            let mut c = connect(&s);
            let head = format!(
                "POST /api/parse HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
                 Content-Length: 100000\r\n\r\n{{\"program\": \"",
                s.addr
            );
            c.write_all(head.as_bytes()).unwrap();
            c
        })
        .collect();
    for _ in 0..3 {
        normal_client_is_answered(&s, Duration::from_secs(3));
    }
    // The slow ones are answered 408 once the body timeout (10 s) is over.
    for c in &mut slow {
        assert_eq!(status_of(c), Some(408));
    }
    let waited = started.elapsed();
    assert!(
        (Duration::from_secs(9)..Duration::from_secs(14)).contains(&waited),
        "{waited:?}"
    );
}

#[test]
fn a_body_declared_too_big_is_refused_before_it_is_read() {
    let s = Serve::start();
    let t = Instant::now();
    let head = format!(
        "POST /api/parse HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Content-Length: 100000000000\r\n\r\n",
        s.addr
    );
    // Nothing of the body is sent: the answer comes from the header alone.
    let answer = raw_answer(&s, &head, b"");
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("as in the CLI"), "{answer}");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    // A chunked body without a declared size is cut at the limit as well.
    let head = format!(
        "POST /api/parse HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Transfer-Encoding: chunked\r\n\r\n",
        s.addr
    );
    let chunk = format!("100000\r\n{}\r\n", "x".repeat(0x100000));
    let answer = raw_answer(&s, &head, chunk.repeat(10).as_bytes());
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    normal_client_is_answered(&s, Duration::from_secs(5));
}

#[test]
fn other_sites_cannot_make_the_server_work() {
    let s = Serve::start();
    let run = json!({"program": "add(A, A, B)", "inputs": "A = 1, B = 2"}).to_string();
    let grade = json!({"exercise": "02-gradient", "program": ""}).to_string();
    let own = s.addr.clone();
    let cases = [
        // The reproduction: a page at evil.example posting text/plain.
        (
            "evil.example",
            Some("http://evil.example"),
            "text/plain",
            403,
            "not this server's address",
        ),
        // DNS rebinding: evil.example resolves to 127.0.0.1, so the request is same-origin.
        (
            "evil.example:1",
            Some("http://evil.example:1"),
            "application/json",
            403,
            "not this server's address",
        ),
        (
            own.as_str(),
            Some("http://evil.example"),
            "application/json",
            403,
            "only the playground's own page",
        ),
        (
            own.as_str(),
            Some("null"),
            "application/json",
            403,
            "only the playground's own page",
        ),
        (own.as_str(), None, "text/plain", 415, "application/json"),
        (
            own.as_str(),
            None,
            "application/x-www-form-urlencoded",
            415,
            "application/json",
        ),
    ];
    for path in ["/api/run", "/api/grade"] {
        let body = if path == "/api/run" { &run } else { &grade };
        for (host, origin, ctype, want, why) in &cases {
            let origin = origin.map_or(String::new(), |o| format!("Origin: {o}\r\n"));
            let head = format!(
                "POST {path} HTTP/1.1\r\nHost: {host}\r\n{origin}Content-Type: {ctype}\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let answer = raw_answer(&s, &head, body.as_bytes());
            assert!(
                answer.starts_with(&format!("HTTP/1.1 {want}")),
                "{host} {origin} {ctype}: {answer}"
            );
            assert!(answer.contains(why), "{answer}");
            assert!(
                !answer.contains("\"runs\"") && !answer.contains("verified"),
                "{answer}"
            );
        }
    }
    // The page itself, from its own address, is answered.
    let head = format!(
        "POST /api/run HTTP/1.1\r\nHost: localhost:{}\r\nOrigin: http://{own}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        own.rsplit(':').next().unwrap(),
        run.len()
    );
    let answer = raw_answer(&s, &head, run.as_bytes());
    assert!(
        answer.starts_with("HTTP/1.1 200") && answer.contains("\"runs\""),
        "{answer}"
    );
}

#[test]
fn one_client_holds_a_bounded_number_of_connections() {
    let s = Serve::start();
    // 32 connections that say nothing are held; the 33rd is turned away at once.
    let idle: Vec<TcpStream> = (0..32).map(|_| connect(&s)).collect();
    std::thread::sleep(Duration::from_millis(300));
    let mut extra = connect(&s);
    let t = Instant::now();
    assert_eq!(status_of(&mut extra), Some(503));
    assert!(t.elapsed() < Duration::from_secs(3));
    drop(idle);
    std::thread::sleep(Duration::from_millis(300));
    normal_client_is_answered(&s, Duration::from_secs(5));
}

#[test]
fn idle_connections_are_closed_after_the_head_timeout() {
    let s = Serve::start();
    let mut c = connect(&s);
    c.write_all(b"GET / HTTP/1.1\r\n").unwrap();
    let t = Instant::now();
    let mut raw = Vec::new();
    let _ = c.read_to_end(&mut raw);
    assert!(
        (Duration::from_secs(9)..Duration::from_secs(14)).contains(&t.elapsed()),
        "{:?}",
        t.elapsed()
    );
}

#[test]
fn listening_beyond_loopback_warns_on_stderr() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_scamp"))
        .args(["serve", "--host", "0.0.0.0", "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(line.starts_with("warning: listening on 0.0.0.0:"), "{line}");
    assert!(line.contains("anyone who can reach it"), "{line}");
}
