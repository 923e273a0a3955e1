//! Which requests the server takes at all, before any work: the `Host` and `Origin` a
//! browser sends must name this server (so a web page elsewhere, or one reached through
//! DNS rebinding, can neither make it work nor read its answers), and the API takes
//! JSON only (a form or `text/plain` post, which any page may send without asking, is
//! refused).

use super::Refusal;
use std::net::{IpAddr, SocketAddr};

/// The names under which this server may be addressed.
#[derive(Clone, Debug)]
pub struct Addressed {
    bound: SocketAddr,
    host_arg: String,
}

impl Addressed {
    /// For a server bound to `bound` after being asked for `--host host_arg`.
    pub fn new(host_arg: &str, bound: SocketAddr) -> Self {
        Addressed {
            bound,
            host_arg: normal_name(host_arg),
        }
    }

    /// Whether `authority` (`name[:port]`) names this server.
    fn names_me(&self, authority: &str) -> bool {
        let Some((name, port)) = split_authority(authority) else {
            return false;
        };
        if port.unwrap_or(80) != self.bound.port() {
            return false;
        }
        let name = normal_name(name);
        let bound = self.bound.ip();
        match name
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
        {
            Ok(ip) => {
                ip == bound || bound.is_unspecified() || (ip.is_loopback() && bound.is_loopback())
            }
            // `localhost` resolves on this machine, never through a web page's DNS.
            Err(_) => name == "localhost" || name == self.host_arg,
        }
    }

    /// Refuses a request whose `Host` or `Origin` names another server.
    pub fn check(&self, host: Option<&str>, origin: Option<&str>) -> Result<(), Refusal> {
        let host = host.ok_or_else(|| Refusal::bad("the request has no Host header"))?;
        if !self.names_me(host) {
            return Err(forbidden(format!(
                "Host `{}` is not this server's address ({}); open the address `scamp serve` printed",
                shown(host),
                self.bound
            )));
        }
        if let Some(origin) = origin {
            let ok = origin
                .strip_prefix("http://")
                .is_some_and(|a| self.names_me(a.trim_end_matches('/')));
            if !ok {
                return Err(forbidden(format!(
                    "requests from the page at `{}` are not taken; only the playground's own page may call its API",
                    shown(origin)
                )));
            }
        }
        Ok(())
    }
}

/// Refuses a POST to the API whose body is not declared JSON (415).
pub fn check_json(method: &str, path: &str, content_type: Option<&str>) -> Result<(), Refusal> {
    if method != "POST" || !path.starts_with("/api/") {
        return Ok(());
    }
    let media = content_type
        .and_then(|c| c.split(';').next())
        .map(|m| m.trim().to_ascii_lowercase());
    if media.as_deref() == Some("application/json") {
        return Ok(());
    }
    Err(Refusal {
        status: 415,
        msg: format!(
            "the API takes `Content-Type: application/json` only (this request has {})",
            content_type.map_or("none".to_string(), |c| format!("`{}`", shown(c)))
        ),
    })
}

fn forbidden(msg: String) -> Refusal {
    Refusal { status: 403, msg }
}

/// A header value as it may be shown in a message: short, printable.
fn shown(v: &str) -> String {
    let mut s: String = v.chars().filter(|c| !c.is_control()).take(80).collect();
    if v.chars().count() > 80 {
        s.push('…');
    }
    s
}

fn normal_name(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// `name[:port]` or `[v6][:port]` into its name and port; `None` when the port is not
/// a number.
fn split_authority(a: &str) -> Option<(&str, Option<u16>)> {
    let (name, port) = if a.starts_with('[') {
        let end = a.find(']')?;
        let rest = &a[end + 1..];
        (&a[..=end], rest.strip_prefix(':'))
    } else {
        match a.rsplit_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (a, None),
        }
    };
    let port = match port {
        Some(p) => Some(p.parse().ok()?),
        None => None,
    };
    (!name.is_empty()).then_some((name, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loopback() -> Addressed {
        Addressed::new("127.0.0.1", "127.0.0.1:8080".parse().unwrap())
    }

    #[test]
    fn the_bound_address_and_localhost_are_taken() {
        let a = loopback();
        for host in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST.:8080",
            "[::1]:8080",
        ] {
            assert_eq!(a.check(Some(host), None), Ok(()), "{host}");
        }
        assert_eq!(
            a.check(Some("127.0.0.1:8080"), Some("http://localhost:8080")),
            Ok(())
        );
    }

    #[test]
    fn other_hosts_ports_and_origins_are_refused() {
        let a = loopback();
        for host in [
            "evil.example",
            "evil.example:8080",
            "127.0.0.1:8081",
            "127.0.0.1",
            "10.0.0.1:8080",
            ":8080",
            "x:y",
        ] {
            let r = a.check(Some(host), None).unwrap_err();
            assert_eq!(r.status, 403, "{host}");
            assert!(r.msg.contains("not this server's address"), "{}", r.msg);
        }
        assert_eq!(a.check(None, None).unwrap_err().status, 400);
        for origin in [
            "http://evil.example",
            "null",
            "https://127.0.0.1:8080",
            "http://127.0.0.1:9",
        ] {
            let r = a.check(Some("127.0.0.1:8080"), Some(origin)).unwrap_err();
            assert_eq!(r.status, 403, "{origin}");
            assert!(
                r.msg.contains("only the playground's own page"),
                "{}",
                r.msg
            );
        }
    }

    #[test]
    fn beyond_loopback_any_address_of_the_machine_but_no_name() {
        let a = Addressed::new("0.0.0.0", "0.0.0.0:80".parse().unwrap());
        assert_eq!(a.check(Some("192.168.1.5"), None), Ok(()));
        assert_eq!(a.check(Some("evil.example"), None).unwrap_err().status, 403);
        let named = Addressed::new("lab-pc.local", "10.0.0.2:8080".parse().unwrap());
        assert_eq!(named.check(Some("lab-pc.local:8080"), None), Ok(()));
        assert!(named.check(Some("127.0.0.1:8080"), None).is_err());
    }

    #[test]
    fn the_api_takes_json_only() {
        assert_eq!(
            check_json("POST", "/api/run", Some("application/json; charset=utf-8")),
            Ok(())
        );
        assert_eq!(check_json("GET", "/", None), Ok(()));
        for ct in [
            None,
            Some("text/plain"),
            Some("application/x-www-form-urlencoded"),
            Some("multipart/form-data; boundary=x"),
        ] {
            let r = check_json("POST", "/api/grade", ct).unwrap_err();
            assert_eq!(r.status, 415);
            assert!(r.msg.contains("application/json"), "{}", r.msg);
        }
    }
}
