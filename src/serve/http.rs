//! The socket side: a `tiny_http` server with a few worker threads, each answering one
//! request at a time through [`super::routes::route`].

use super::routes::{refused, route, Reply, MAX_BODY_BYTES};
use super::Refusal;
use std::io::Read;
use std::net::SocketAddr;
use std::sync::Arc;

/// Where and how to listen.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Address to bind (`127.0.0.1` keeps the playground on this machine).
    pub host: String,
    /// Port (0: any free port).
    pub port: u16,
    /// Requests answered at once.
    pub workers: usize,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            host: "127.0.0.1".into(),
            port: 8080,
            workers: 4,
        }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot listen on {addr}: {why}")]
pub struct ServeError {
    /// The address asked for.
    pub addr: String,
    /// What went wrong.
    pub why: String,
}

/// A bound server, not yet answering.
pub struct Server {
    inner: Arc<tiny_http::Server>,
    addr: SocketAddr,
    workers: usize,
}

impl Server {
    /// Binds the address of `opts`.
    pub fn bind(opts: &ServeOptions) -> Result<Server, ServeError> {
        let addr = format!("{}:{}", opts.host, opts.port);
        let err = |why: String| ServeError {
            addr: addr.clone(),
            why,
        };
        let inner = tiny_http::Server::http(&addr).map_err(|e| err(e.to_string()))?;
        let bound = inner
            .server_addr()
            .to_ip()
            .ok_or_else(|| err("not an IP address".into()))?;
        Ok(Server {
            inner: Arc::new(inner),
            addr: bound,
            workers: opts.workers.max(1),
        })
    }

    /// The address it listens on (with the port chosen when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The playground's address for a browser.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Answers requests until the process ends.
    pub fn run(self) {
        let threads: Vec<_> = (0..self.workers)
            .map(|_| {
                let server = Arc::clone(&self.inner);
                std::thread::spawn(move || {
                    while let Ok(rq) = server.recv() {
                        answer(rq);
                    }
                })
            })
            .collect();
        for t in threads {
            // A worker only ends when the socket closes; its panic (none is expected)
            // must not take the others down with it.
            let _ = t.join();
        }
    }
}

/// Reads the body (refusing one over the limit), routes it and sends the reply.
fn answer(mut rq: tiny_http::Request) {
    let too_big = rq.body_length().is_some_and(|n| n as u64 > MAX_BODY_BYTES);
    let mut body = Vec::new();
    let read = rq
        .as_reader()
        .take(MAX_BODY_BYTES + 1)
        .read_to_end(&mut body);
    let reply = if too_big || body.len() as u64 > MAX_BODY_BYTES {
        refused(&Refusal {
            status: 413,
            msg: format!(
                "request body over {MAX_BODY_BYTES} bytes (a program may have at most {} bytes, as in the CLI)",
                crate::isa::source::MAX_PROGRAM_BYTES
            ),
        })
    } else if let Err(e) = read {
        refused(&Refusal::bad(format!("cannot read the request body: {e}")))
    } else {
        let method = rq.method().as_str().to_string();
        let url = rq.url().to_string();
        std::panic::catch_unwind(|| route(&method, &url, &body)).unwrap_or_else(|_| {
            refused(&Refusal {
                status: 500,
                msg: "internal error (a bug: please report the request)".into(),
            })
        })
    };
    send(rq, reply);
}

fn send(rq: tiny_http::Request, reply: Reply) {
    let mut response = tiny_http::Response::from_data(reply.body).with_status_code(reply.status);
    for (k, v) in [
        ("Content-Type", reply.content_type),
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
    ] {
        if let Ok(h) = tiny_http::Header::from_bytes(k.as_bytes(), v.as_bytes()) {
            response.add_header(h);
        }
    }
    // The client may have gone; nothing to do about it.
    let _ = rq.respond(response);
}
