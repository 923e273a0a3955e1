//! `scamp serve`: the playground, a local web app to edit, run and step through
//! programs, compare the exact and the noisy array, and grade the tutorial's exercises.
//! One self-contained page (styles and script built in, nothing fetched from the
//! network) talks JSON to a small HTTP server that bounds what each client may ask of it
//! ([`limits`], [`guard`]). Every request carries all it
//! needs (the program, the inputs, the step), so users never share state.

pub mod api;
pub mod connection;
pub mod exercises;
pub mod guard;
pub mod http;
pub mod limits;
pub mod page;
pub mod routes;
pub mod session;
pub mod steps;
pub mod tutorial;

pub use http::{ServeError, ServeOptions, Server};

/// A request the server will not answer as asked: the HTTP status (4xx for the
/// client's mistakes) and a one-line reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// HTTP status code.
    pub status: u16,
    /// Why, for the person who sent it.
    pub msg: String,
}

impl Refusal {
    /// A bad request (400) with its reason.
    pub fn bad(msg: impl Into<String>) -> Self {
        Refusal {
            status: 400,
            msg: msg.into(),
        }
    }
}
