//! One connection: hyper reads its requests within [`super::limits`], each request is
//! checked ([`super::guard`]) before its body is read, the body is read with a size and
//! time bound, and the work runs on the blocking pool (answers that need no work, the
//! page, are given at once).

use super::guard::{check_json, Addressed};
use super::limits::{
    Full, BODY_TIMEOUT, CONNECTION_LIFETIME, HEAD_TIMEOUT, LINGER, MAX_HEADERS, MAX_HEAD_BYTES,
};
use super::routes::{refused, route, too_big, Reply, MAX_BODY_BYTES};
use super::Refusal;
use http_body_util::{BodyExt, Full as FullBody, LengthLimitError, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, HOST, ORIGIN};
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// What every connection reads.
pub struct Shared {
    /// The names this server answers to.
    pub addressed: Addressed,
}

/// Answers the requests of one connection until it closes, its head or body times
/// out, or [`CONNECTION_LIFETIME`] is up.
pub async fn serve_connection(stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let service = hyper::service::service_fn(move |rq| {
        let shared = Arc::clone(&shared);
        async move { Ok::<_, Infallible>(answer(rq, &shared).await) }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT)
        .max_header_size(MAX_HEAD_BYTES)
        .max_buf_size(MAX_HEAD_BYTES)
        .max_headers(MAX_HEADERS);
    let conn = builder
        .serve_connection(TokioIo::new(stream), service)
        .without_shutdown();
    if let Ok(Ok(parts)) = tokio::time::timeout(CONNECTION_LIFETIME, conn).await {
        linger(parts.io.into_inner()).await;
    }
}

/// Closes our side, then reads and drops what the client still sends for at most
/// [`LINGER`]: closing with unread data would reset the connection and lose the answer
/// (a body refused before it was read).
async fn linger(mut stream: TcpStream) {
    let _ = stream.shutdown().await;
    let mut sink = [0u8; 16 * 1024];
    let _ = tokio::time::timeout(LINGER, async {
        while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
    })
    .await;
}

/// Answers a connection over the limits with 503 and closes it.
pub async fn turn_away(mut stream: TcpStream, full: Full) {
    let msg = match full {
        Full::Client => "too many connections from your address at once; close some and retry",
        Full::Server => "the server has too many connections at once; retry in a moment",
    };
    let body = serde_json::json!({ "error": msg }).to_string();
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\nRetry-After: 1\r\n\r\n",
        body.len()
    );
    let _ = tokio::time::timeout(LINGER, async {
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body.as_bytes()).await?;
        stream.shutdown().await
    })
    .await;
}

/// One request to its answer.
async fn answer(rq: Request<Incoming>, shared: &Shared) -> Response<FullBody<Bytes>> {
    let method = rq.method().as_str().to_string();
    let target = rq
        .uri()
        .path_and_query()
        .map_or("/".to_string(), |p| p.as_str().to_string());
    let header = |name| {
        rq.headers()
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    let checked = shared
        .addressed
        .check(header(HOST), header(ORIGIN))
        .and_then(|()| check_json(&method, rq.uri().path(), header(CONTENT_TYPE)));
    if let Err(r) = checked {
        return closing(refused(&r));
    }
    let declared = header(CONTENT_LENGTH).and_then(|n| n.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES) {
        return closing(refused(&too_big()));
    }
    let body = match read_body(rq.into_body()).await {
        Ok(body) => body,
        Err(r) => return closing(refused(&r)),
    };
    if method == "GET" || method == "HEAD" {
        return response(route(&method, &target, &body));
    }
    let work = tokio::task::spawn_blocking(move || route(&method, &target, &body));
    response(work.await.unwrap_or_else(|_| {
        refused(&Refusal {
            status: 500,
            msg: "internal error (a bug: please report the request)".into(),
        })
    }))
}

/// The body, at most [`MAX_BODY_BYTES`] within [`BODY_TIMEOUT`].
async fn read_body(body: Incoming) -> Result<Bytes, Refusal> {
    let read = tokio::time::timeout(
        BODY_TIMEOUT,
        Limited::new(body, MAX_BODY_BYTES as usize).collect(),
    );
    match read.await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => Err(too_big()),
        Ok(Err(e)) => Err(Refusal::bad(format!("cannot read the request body: {e}"))),
        Err(_) => Err(Refusal {
            status: 408,
            msg: format!(
                "the request body did not arrive within {} s",
                BODY_TIMEOUT.as_secs()
            ),
        }),
    }
}

fn response(reply: Reply) -> Response<FullBody<Bytes>> {
    let mut r = Response::new(FullBody::new(Bytes::from(reply.body)));
    *r.status_mut() = hyper::StatusCode::from_u16(reply.status)
        .unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static(reply.content_type));
    h.insert("cache-control", HeaderValue::from_static("no-store"));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// An answer after which the connection closes (its body may be unread).
fn closing(reply: Reply) -> Response<FullBody<Bytes>> {
    let mut r = response(reply);
    r.headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    r
}
