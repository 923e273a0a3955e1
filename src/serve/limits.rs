//! How much one client may ask of the server: sizes, times and connections. A client
//! that sends a header without end, a body slowly or many connections at once is cut
//! off by these bounds, and every other client is answered meanwhile.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Largest request head (request line and every header line) read: a longer one is
/// answered 431 without reading further.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;
/// Most header lines in one request.
pub const MAX_HEADERS: usize = 64;
/// Time a client has to send its whole request head.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Time a client has to send its whole body once the head is in.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest a connection stays open, whatever it does (a client that never reads its
/// answer would hold it for ever).
pub const CONNECTION_LIFETIME: Duration = Duration::from_secs(300);
/// Connections one client address may hold open at once.
pub const MAX_CONNECTIONS_PER_CLIENT: usize = 32;
/// Connections held open at once, all clients together.
pub const MAX_CONNECTIONS: usize = 256;
/// After an answer, how long what the client still sends is read and dropped, so the
/// answer reaches it before the connection closes (closing on unread data resets it).
pub const LINGER: Duration = Duration::from_secs(2);

/// Open connections per client address.
#[derive(Clone, Default)]
pub struct Clients {
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

/// One open connection, counted until dropped.
pub struct Slot {
    clients: Clients,
    ip: IpAddr,
}

/// Why a connection was not taken.
#[derive(Debug, PartialEq, Eq)]
pub enum Full {
    /// This client holds [`MAX_CONNECTIONS_PER_CLIENT`] already.
    Client,
    /// The server holds [`MAX_CONNECTIONS`] already.
    Server,
}

impl Clients {
    /// Counts a new connection from `ip`, or says why it is refused.
    pub fn take(&self, ip: IpAddr) -> Result<Slot, Full> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let total: usize = open.values().sum();
        let mine = open.get(&ip).copied().unwrap_or(0);
        if mine >= MAX_CONNECTIONS_PER_CLIENT {
            return Err(Full::Client);
        }
        if total >= MAX_CONNECTIONS {
            return Err(Full::Server);
        }
        open.insert(ip, mine + 1);
        Ok(Slot {
            clients: self.clone(),
            ip,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.clients.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = open.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_holds_at_most_its_share_and_gets_it_back_on_close() {
        let clients = Clients::default();
        let a: IpAddr = [127, 0, 0, 1].into();
        let b: IpAddr = [127, 0, 0, 2].into();
        let held: Vec<Slot> = (0..MAX_CONNECTIONS_PER_CLIENT)
            .map(|_| clients.take(a).unwrap())
            .collect();
        assert_eq!(clients.take(a).err(), Some(Full::Client));
        let other = clients.take(b).expect("another client is still served");
        drop(held);
        drop(other);
        assert!(clients.open.lock().unwrap().is_empty());
        assert!(clients.take(a).is_ok());
    }

    #[test]
    fn the_server_holds_at_most_its_total() {
        let clients = Clients::default();
        let held: Vec<Slot> = (0..MAX_CONNECTIONS)
            .map(|k| {
                clients
                    .take([10, 0, (k / 256) as u8, (k % 256) as u8].into())
                    .unwrap()
            })
            .collect();
        assert_eq!(clients.take([10, 1, 0, 0].into()).err(), Some(Full::Server));
        assert_eq!(held.len(), MAX_CONNECTIONS);
    }
}
