//! A `scamp serve` process on a free port, and a minimal HTTP/1.1 client for it.

#![allow(dead_code)] // each test crate uses its own subset

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running server; stopped when dropped.
pub struct Serve {
    child: Child,
    /// `host:port` it listens on.
    pub addr: String,
}

impl Serve {
    /// Starts `scamp serve --port 0` (from a folder outside the repository, so nothing
    /// it needs may come from the working directory) and reads the address it prints.
    pub fn start() -> Serve {
        let mut child = Command::new(env!("CARGO_BIN_EXE_scamp"))
            .args(["serve", "--port", "0"])
            .current_dir(std::env::temp_dir())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("scamp serve starts");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        let mut reader = BufReader::new(stdout);
        reader.read_line(&mut line).expect("the address line");
        // Keep reading what it prints, so it never writes to a closed pipe.
        std::thread::spawn(move || reader.lines().for_each(drop));
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|s| s.trim().strip_suffix('/'))
            .unwrap_or_else(|| panic!("no address in `{line}`"))
            .to_string();
        assert!(
            addr.starts_with("127.0.0.1:"),
            "binds localhost by default: {addr}"
        );
        Serve { child, addr }
    }

    /// The server's resident memory in bytes (from `/proc`).
    pub fn rss_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the server's /proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .expect("a VmRSS line")
            * 1024
    }

    /// The playground's address.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Sends one request and returns (status, body).
    pub fn request(&self, method: &str, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
        let mut s = TcpStream::connect(&self.addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(120))).ok();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            self.addr,
            body.len()
        );
        s.write_all(head.as_bytes()).expect("send head");
        // The server may answer (and close) before reading a body it refuses.
        let _ = s.write_all(body);
        let mut raw = Vec::new();
        let _ = s.read_to_end(&mut raw);
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a complete HTTP answer");
        let head = String::from_utf8_lossy(&raw[..split]).into_owned();
        let status: u16 = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("a status");
        let mut body = raw[split + 4..].to_vec();
        if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            body = unchunk(&body);
        }
        (status, body)
    }

    /// POSTs `value` as JSON and parses the JSON answer.
    pub fn post(&self, path: &str, value: &serde_json::Value) -> (u16, serde_json::Value) {
        let (status, body) = self.request("POST", path, value.to_string().as_bytes());
        let v = serde_json::from_slice(&body).unwrap_or_else(|e| {
            panic!("{path}: not JSON ({e}): {}", String::from_utf8_lossy(&body))
        });
        (status, v)
    }
}

fn unchunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = b.windows(2).position(|w| w == b"\r\n") {
        let n = usize::from_str_radix(String::from_utf8_lossy(&b[..eol]).trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.extend_from_slice(&b[eol + 2..eol + 2 + n]);
        b = &b[eol + 2 + n + 2..];
    }
    out
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
