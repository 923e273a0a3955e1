//! The socket side: a tokio runtime accepts connections and reads requests with hyper
//! (heads bounded in size and time, bodies in size and time), and runs each request's
//! work through [`super::routes::route`] on a bounded pool of blocking threads, so a
//! slow or hostile client never holds a thread that another client's answer needs.

use super::connection::{serve_connection, turn_away, Shared};
use super::guard::Addressed;
use super::limits::Clients;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;

/// Where and how to listen.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Address to bind (`127.0.0.1` keeps the playground on this machine).
    pub host: String,
    /// Port (0: any free port).
    pub port: u16,
    /// Requests worked on at once.
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

/// Why the server could not start or stopped.
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
    listener: TcpListener,
    addr: SocketAddr,
    host: String,
    workers: usize,
}

impl Server {
    /// Binds the address of `opts`.
    pub fn bind(opts: &ServeOptions) -> Result<Server, ServeError> {
        let asked = if opts.host.contains(':') && !opts.host.starts_with('[') {
            format!("[{}]:{}", opts.host, opts.port)
        } else {
            format!("{}:{}", opts.host, opts.port)
        };
        let err = |why: String| ServeError {
            addr: asked.clone(),
            why,
        };
        let listener = TcpListener::bind(&asked).map_err(|e| err(e.to_string()))?;
        let addr = listener.local_addr().map_err(|e| err(e.to_string()))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| err(e.to_string()))?;
        Ok(Server {
            listener,
            addr,
            host: opts.host.clone(),
            workers: opts.workers.max(1),
        })
    }

    /// The address it listens on (with the port chosen when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Whether only this machine can reach it.
    pub fn is_loopback(&self) -> bool {
        self.addr.ip().is_loopback()
    }

    /// The playground's address for a browser.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Answers requests until the process ends (or the runtime cannot start).
    pub fn run(self) -> Result<(), ServeError> {
        let err = |why: String| ServeError {
            addr: self.addr.to_string(),
            why,
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .max_blocking_threads(self.workers)
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| err(e.to_string()))?;
        let shared = Arc::new(Shared {
            addressed: Addressed::new(&self.host, self.addr),
        });
        let clients = Clients::default();
        runtime.block_on(async move {
            let listener =
                tokio::net::TcpListener::from_std(self.listener).map_err(|e| err(e.to_string()))?;
            loop {
                // A failed accept (out of descriptors, a client gone) ends only that one.
                let Ok((stream, peer)) = listener.accept().await else {
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                };
                let shared = Arc::clone(&shared);
                match clients.take(peer.ip()) {
                    Ok(slot) => tokio::spawn(async move {
                        serve_connection(stream, shared).await;
                        drop(slot);
                    }),
                    Err(full) => tokio::spawn(turn_away(stream, full)),
                };
            }
        })
    }
}
