//! The smallest HTTP/1.x server `serve` needs: `GET` on a few paths, one request per connection,
//! over plain TCP or TLS ([`super::web`]).
//!
//! The request head is parsed by [`head`] from a fixed [`MAX_HEAD`]-byte buffer. Bodies are
//! never read. Every response carries `Content-Length` and `Connection: close`. Connections are
//! handled by a fixed pool of [`WORKERS`] threads fed through a bounded queue; each connection
//! has a deadline for its TLS handshake and request head together ([`READ_TIMEOUT`]) and a write
//! deadline, so a slow, silent or non-TLS client holds a worker for at most [`READ_TIMEOUT`]
//! plus the write time. The handshake runs in the worker, under that deadline.

pub mod head;

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use super::web::{Policy, Web};
pub use head::{MAX_HEAD, Request, Response};

/// Threads answering connections.
pub const WORKERS: usize = 4;
/// How long a client may take to finish the TLS handshake and send its request head.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a client may take to take the response.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// A connection: plain, or TLS over it.
enum Conn {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ServerConnection, TcpStream>>),
}

impl Conn {
    fn tcp(&self) -> &TcpStream {
        match self {
            Conn::Plain(s) => s,
            Conn::Tls(s) => &s.sock,
        }
    }
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Plain(s) => s.read(buf),
            Conn::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Plain(s) => s.write(buf),
            Conn::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Conn::Plain(s) => s.flush(),
            Conn::Tls(s) => s.flush(),
        }
    }
}

/// Sets `stream`'s read and write timeouts to what is left until `deadline`; false when
/// nothing is left.
fn timeouts_until(stream: &TcpStream, deadline: Instant) -> bool {
    let left = deadline.saturating_duration_since(Instant::now());
    !left.is_zero()
        && stream.set_read_timeout(Some(left)).is_ok()
        && stream.set_write_timeout(Some(left)).is_ok()
}

/// The TLS handshake on `stream`, finished by `deadline` or abandoned. A client that speaks
/// plain HTTP gets Go's answer to that (`400`, in plain HTTP) before the connection is closed.
fn handshake(
    stream: TcpStream,
    config: Arc<rustls::ServerConfig>,
    deadline: Instant,
) -> Option<Conn> {
    if !timeouts_until(&stream, deadline) {
        return None;
    }
    // A TLS connection starts with a handshake record (content type 22).
    let mut first = [0u8; 1];
    match stream.peek(&mut first) {
        Ok(1) if first[0] == 22 => {}
        Ok(1) if first[0].is_ascii_uppercase() => {
            let mut s = &stream;
            let _ = s.write_all(
                b"HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n\
                  Connection: close\r\n\r\nClient sent an HTTP request to an HTTPS server.\n",
            );
            linger(&stream);
            return None;
        }
        _ => return None,
    }
    let mut conn = rustls::ServerConnection::new(config).ok()?;
    let mut tcp = stream;
    while conn.is_handshaking() {
        if !timeouts_until(&tcp, deadline) {
            return None;
        }
        // A failed handshake (wrong client CA, no common version) sends its alert and ends.
        if conn.complete_io(&mut tcp).is_err() {
            return None;
        }
    }
    Some(Conn::Tls(Box::new(rustls::StreamOwned::new(conn, tcp))))
}

/// Reads one request head from `conn` by `deadline` and parses it; `Err(response)` for a
/// request that gets an error status without reaching the handler.
fn read_request(conn: &mut Conn, deadline: Instant) -> Result<Request, Option<Response>> {
    let mut buf = [0u8; MAX_HEAD];
    let mut len = 0;
    let timed_out = || Some(Response::text(408, "request head not received in time\n"));
    // The whole head within the deadline, however the client trickles it.
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || conn.tcp().set_read_timeout(Some(left)).is_err() {
            return Err(timed_out());
        }
        let n = match conn.read(&mut buf[len..]) {
            Ok(0) => return Err(None), // closed before a whole request: nothing to answer
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Err(timed_out());
            }
            Err(_) => return Err(None),
        };
        len += n;
        match head::parse_head(&buf[..len]) {
            Ok(head::Head::Complete(req)) => return Ok(req),
            Ok(head::Head::Partial) => continue,
            Err(r) => return Err(Some(r)),
        }
    }
}

fn write_response(conn: &mut Conn, r: &Response, extra: &[String]) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        r.status,
        head::reason(r.status),
        r.content_type,
        r.body.len()
    );
    for h in r.headers.iter().chain(extra) {
        head.push_str(h);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    conn.write_all(head.as_bytes())?;
    conn.write_all(&r.body)?;
    conn.flush()
}

/// Reads what the client may still send (a body we ignored), briefly and boundedly, so
/// closing does not reset the connection before it read the response.
fn linger(stream: &TcpStream) {
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(100)));
    let until = Instant::now() + Duration::from_millis(200);
    let mut sink = [0u8; 4096];
    let mut left: usize = 64 * 1024;
    let mut s = stream;
    while left > 0 && Instant::now() < until {
        match s.read(&mut sink) {
            Ok(n) if n > 0 => left = left.saturating_sub(n),
            _ => break,
        }
    }
}

fn handle_connection<H: Fn(&Request) -> Response>(
    stream: TcpStream,
    handler: &H,
    web: Option<&Web>,
) {
    let deadline = Instant::now() + READ_TIMEOUT;
    let _ = stream.set_read_timeout(Some(READ_TIMEOUT));
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let policy: Option<Arc<Policy>> = match web.map(Web::current) {
        None => None,
        Some(Ok(p)) => Some(p),
        Some(Err(())) if web.is_some_and(Web::speaks_tls) => return, // no TLS config to answer with
        Some(Err(())) => {
            let mut conn = Conn::Plain(stream);
            let r = Response::text(500, "the web config file is invalid: see serve's log\n");
            let _ = write_response(&mut conn, &r, &[]);
            linger(conn.tcp());
            return;
        }
    };
    let mut conn = match policy.as_ref().and_then(|p| p.tls.clone()) {
        Some(config) => match handshake(stream, config, deadline) {
            Some(c) => c,
            None => return,
        },
        None => Conn::Plain(stream),
    };
    let _ = conn.tcp().set_write_timeout(Some(WRITE_TIMEOUT));
    let response = match read_request(&mut conn, deadline) {
        Ok(req) => match (web, &policy) {
            (Some(web), Some(p)) if !web.authorized(p, req.authorization.as_deref()) => {
                let mut r = Response::text(401, "Unauthorized\n");
                r.headers.push("WWW-Authenticate: Basic".into());
                r
            }
            _ => handler(&req),
        },
        Err(Some(r)) => r,
        Err(None) => return,
    };
    let extra = policy.as_ref().map_or(&[][..], |p| &p.headers[..]);
    // The client's errors (gone, slow) are its own: nothing to do about them here.
    let _ = conn.tcp().set_write_timeout(Some(WRITE_TIMEOUT));
    let _ = write_response(&mut conn, &response, extra);
    if let Conn::Tls(tls) = &mut conn {
        tls.conn.send_close_notify();
        let _ = tls.flush();
    }
    linger(conn.tcp());
}

/// Answers connections on `listener` with `handler` until `stop` is set (then wakes the accept
/// loop by connecting to it, see [`wake`]); returns once every accepted connection was answered.
///
/// # Errors
/// Only an error of the listening socket itself (not of a connection).
pub fn run<H>(
    listener: TcpListener,
    handler: Arc<H>,
    web: Option<Arc<Web>>,
    stop: Arc<AtomicBool>,
) -> io::Result<()>
where
    H: Fn(&Request) -> Response + Send + Sync + 'static,
{
    let (tx, rx) = mpsc::sync_channel::<TcpStream>(64);
    let rx = Arc::new(Mutex::new(rx));
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let rx = Arc::clone(&rx);
            let handler = Arc::clone(&handler);
            let web = web.clone();
            std::thread::spawn(move || {
                loop {
                    let next = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    let Ok(stream) = next else { break };
                    handle_connection(stream, &*handler, web.as_deref());
                }
            })
        })
        .collect();
    let mut result = Ok(());
    for stream in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        match stream {
            Ok(s) => {
                if tx.send(s).is_err() {
                    break;
                }
            }
            // A connection that failed before it was accepted (reset, out of fds for a moment):
            // the next one may work.
            Err(e) if is_transient(&e) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    drop(tx);
    for w in workers {
        let _ = w.join();
    }
    result
}

fn is_transient(e: &io::Error) -> bool {
    e.raw_os_error()
        .is_some_and(|code| super::os::TRANSIENT_ERRORS.contains(&code))
        || matches!(
            e.kind(),
            io::ErrorKind::ConnectionAborted | io::ErrorKind::Interrupted
        )
}

/// Wakes an accept loop blocked on `addr` (after its stop flag was set) by connecting to it.
pub fn wake(addr: std::net::SocketAddr) {
    let mut addr = addr;
    if addr.ip().is_unspecified() {
        addr.set_ip(match addr {
            std::net::SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            std::net::SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    let _ = TcpStream::connect_timeout(&addr, Duration::from_secs(1));
}
