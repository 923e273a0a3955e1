//! `scamp serve [--port P] [--host H] [--open]`: starts the playground of
//! [`crate::serve`] and prints its address.

use super::{CliError, Outcome};
use crate::serve::{ServeOptions, Server};

/// Arguments of `scamp serve`.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Port to listen on (0: any free port; the address is printed).
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Address to bind; the default keeps the playground on this machine.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Open the playground in the desktop's browser (`xdg-open`).
    #[arg(long)]
    open: bool,
}

/// Runs `scamp serve` until the process is stopped.
pub fn run(a: &ServeArgs) -> Outcome {
    let server = Server::bind(&ServeOptions {
        host: a.host.clone(),
        port: a.port,
        ..ServeOptions::default()
    })
    .map_err(CliError::msg)?;
    let url = server.url();
    println!("scamp playground listening on {url}");
    if !server.is_loopback() {
        eprintln!(
            "warning: listening on {} beyond this machine: anyone who can reach it may run programs here; \
             pages must address it as an IP address or `{}` (use --host 127.0.0.1 to keep it local)",
            server.addr(),
            a.host
        );
    }
    println!("share a program as {url}?program=<url-encoded text>; Ctrl-C stops");
    if a.open {
        if let Err(e) = std::process::Command::new("xdg-open").arg(&url).spawn() {
            eprintln!("warning: cannot open a browser ({e}); open {url} yourself");
        }
    }
    server.run().map_err(CliError::msg)?;
    Ok(0)
}
