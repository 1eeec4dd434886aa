//! The smallest HTTP/1.x server `serve` needs: `GET` on a few paths, one request per connection.
//!
//! Requests are parsed by [`httparse`] (hyper's parser: no dependencies, no allocation) from a
//! fixed [`MAX_HEAD`]-byte buffer into a fixed array of [`MAX_HEADERS`] headers, so the request
//! line and headers are bounded by construction: a longer head gets `431`, more headers `431`,
//! a malformed one `400`. Bodies are never read. Every response carries `Content-Length` and
//! `Connection: close`. Connections are handled by a fixed pool of [`WORKERS`] threads fed
//! through a bounded queue; each connection has read and write deadlines, so a slow or silent
//! client holds a worker for at most [`READ_TIMEOUT`] plus the write time.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// Largest request line plus headers accepted, in bytes.
pub const MAX_HEAD: usize = 8192;
/// Most headers accepted.
pub const MAX_HEADERS: usize = 32;
/// Threads answering connections.
pub const WORKERS: usize = 4;
/// How long a client may take to send its request head.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a client may take to take the response.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// A parsed request: what the handler needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The method, e.g. `GET`.
    pub method: String,
    /// The path without the query string, e.g. `/metrics`.
    pub path: String,
}

/// A response to send.
#[derive(Debug, Clone)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// Extra header lines (`Name: value`), e.g. `Allow: GET`.
    pub headers: Vec<String>,
    /// The body (shared: every request a scrape answers sends the same page).
    pub body: Arc<[u8]>,
}

impl Response {
    /// A plain-text response.
    pub fn text(status: u16, body: &str) -> Self {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            headers: Vec::new(),
            body: Arc::from(body.as_bytes()),
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        505 => "HTTP Version Not Supported",
        _ => "",
    }
}

/// Reads one request head from `stream` and parses it; `Err(response)` for a request that gets
/// an error status without reaching the handler.
fn read_request(stream: &mut TcpStream) -> Result<Request, Option<Response>> {
    let mut buf = [0u8; MAX_HEAD];
    let mut len = 0;
    // The whole head within READ_TIMEOUT, however the client trickles it.
    let deadline = std::time::Instant::now() + READ_TIMEOUT;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return Err(Some(Response::text(
                408,
                "request head not received in time\n",
            )));
        }
        let n = match stream.read(&mut buf[len..]) {
            Ok(0) => return Err(None), // closed before a whole request: nothing to answer
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Err(Some(Response::text(
                    408,
                    "request head not received in time\n",
                )));
            }
            Err(_) => return Err(None),
        };
        len += n;
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&buf[..len]) {
            Ok(httparse::Status::Complete(_)) => {
                let path = req.path.unwrap_or("/");
                let path = path.split_once('?').map_or(path, |(p, _)| p);
                return Ok(Request {
                    method: req.method.unwrap_or("").to_string(),
                    path: path.to_string(),
                });
            }
            Ok(httparse::Status::Partial) if len == MAX_HEAD => {
                return Err(Some(Response::text(
                    431,
                    &format!("request line and headers are limited to {MAX_HEAD} bytes\n"),
                )));
            }
            Ok(httparse::Status::Partial) => continue,
            Err(httparse::Error::TooManyHeaders) => {
                return Err(Some(Response::text(
                    431,
                    &format!("at most {MAX_HEADERS} headers\n"),
                )));
            }
            Err(httparse::Error::Version) => {
                return Err(Some(Response::text(505, "HTTP/1.0 or HTTP/1.1 only\n")));
            }
            Err(e) => return Err(Some(Response::text(400, &format!("bad request: {e}\n")))),
        }
    }
}

fn write_response(stream: &mut TcpStream, r: &Response) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        r.status,
        reason(r.status),
        r.content_type,
        r.body.len()
    );
    for h in &r.headers {
        head.push_str(h);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(&r.body)?;
    stream.flush()
}

fn handle_connection<H: Fn(&Request) -> Response>(mut stream: TcpStream, handler: &H) {
    let _ = stream.set_read_timeout(Some(READ_TIMEOUT));
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let response = match read_request(&mut stream) {
        Ok(req) => handler(&req),
        Err(Some(r)) => r,
        Err(None) => return,
    };
    // The client's errors (gone, slow) are its own: nothing to do about them here.
    let _ = write_response(&mut stream, &response);
    let _ = stream.shutdown(std::net::Shutdown::Write);
    // Read what the client may still send (a body we ignored), briefly and boundedly, so
    // closing does not reset the connection before it read the response.
    let _ = stream.set_read_timeout(Some(Duration::from_millis(100)));
    let until = std::time::Instant::now() + Duration::from_millis(200);
    let mut sink = [0u8; 4096];
    let mut left: usize = 64 * 1024;
    while left > 0 && std::time::Instant::now() < until {
        match stream.read(&mut sink) {
            Ok(n) if n > 0 => left = left.saturating_sub(n),
            _ => break,
        }
    }
}

/// Answers connections on `listener` with `handler` until `stop` is set (then wakes the accept
/// loop by connecting to it, see [`wake`]); returns once every accepted connection was answered.
///
/// # Errors
/// Only an error of the listening socket itself (not of a connection).
pub fn run<H>(listener: TcpListener, handler: Arc<H>, stop: Arc<AtomicBool>) -> io::Result<()>
where
    H: Fn(&Request) -> Response + Send + Sync + 'static,
{
    let (tx, rx) = mpsc::sync_channel::<TcpStream>(64);
    let rx = Arc::new(Mutex::new(rx));
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let rx = Arc::clone(&rx);
            let handler = Arc::clone(&handler);
            std::thread::spawn(move || {
                loop {
                    let next = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    let Ok(stream) = next else { break };
                    handle_connection(stream, &*handler);
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
    matches!(
        e.raw_os_error(),
        Some(
            libc::ECONNABORTED
                | libc::EINTR
                | libc::EMFILE
                | libc::ENFILE
                | libc::ENOBUFS
                | libc::ENOMEM
                | libc::EPROTO
        )
    ) || matches!(
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
