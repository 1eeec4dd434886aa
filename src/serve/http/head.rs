//! The pure part of `serve`'s HTTP: parsing a request head and Basic credentials, and the
//! response type. No I/O, so the fuzz target `http_head` (fuzz/) includes this file as it is.
//!
//! Requests are parsed by [`httparse`] (hyper's parser: no dependencies, no allocation) into a
//! fixed array of [`MAX_HEADERS`] headers; the caller reads into a fixed [`MAX_HEAD`]-byte
//! buffer, so the request line and headers are bounded by construction: a longer head gets
//! `431`, more headers `431`, a malformed one `400`, another HTTP version `505`.

use std::sync::Arc;

use base64::Engine;

/// Largest request line plus headers accepted, in bytes.
pub const MAX_HEAD: usize = 8192;
/// Most headers accepted.
pub const MAX_HEADERS: usize = 32;

/// A parsed request: what the handler needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The method, e.g. `GET`.
    pub method: String,
    /// The path without the query string, e.g. `/metrics`.
    pub path: String,
    /// The value of the (first) `Authorization` header, if any, e.g. `Basic dXNlcjpwdw==`.
    pub authorization: Option<String>,
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

/// The reason phrase of the status codes `serve` sends (empty for others).
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        505 => "HTTP Version Not Supported",
        _ => "",
    }
}

/// What the bytes received so far make.
#[derive(Debug)]
pub enum Head {
    /// A whole request head.
    Complete(Request),
    /// Not yet a whole head: read more (the buffer is not full).
    Partial,
}

/// Parses the request head at the start of `buf` (the bytes received so far; at most
/// [`MAX_HEAD`]). `Err` is the response for a request refused before the handler: `431` when
/// `buf` is full without a whole head or there are more than [`MAX_HEADERS`] headers, `505` for
/// an HTTP version other than 1.0 and 1.1, `400` for any other malformation.
pub fn parse_head(buf: &[u8]) -> Result<Head, Response> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(buf) {
        Ok(httparse::Status::Complete(_)) => {
            let path = req.path.unwrap_or("/");
            let path = path.split_once('?').map_or(path, |(p, _)| p);
            let authorization = req
                .headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case("authorization"))
                .map(|h| String::from_utf8_lossy(h.value).into_owned());
            Ok(Head::Complete(Request {
                method: req.method.unwrap_or("").to_string(),
                path: path.to_string(),
                authorization,
            }))
        }
        Ok(httparse::Status::Partial) if buf.len() >= MAX_HEAD => Err(Response::text(
            431,
            &format!("request line and headers are limited to {MAX_HEAD} bytes\n"),
        )),
        Ok(httparse::Status::Partial) => Ok(Head::Partial),
        Err(httparse::Error::TooManyHeaders) => Err(Response::text(
            431,
            &format!("at most {MAX_HEADERS} headers\n"),
        )),
        Err(httparse::Error::Version) => Err(Response::text(505, "HTTP/1.0 or HTTP/1.1 only\n")),
        Err(e) => Err(Response::text(400, &format!("bad request: {e}\n"))),
    }
}

/// The user and password of an `Authorization: Basic <base64(user:password)>` value (RFC 7617;
/// the scheme's name in any case, standard base64 with padding, split at the first `:`), or
/// `None` for another scheme or a malformed value. Neither part need be UTF-8 in the protocol;
/// here both must be, as the names and bcrypt hashes of the web config are YAML strings.
pub fn basic_credentials(authorization: &str) -> Option<(String, String)> {
    let (scheme, encoded) = authorization.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    Some((user.to_string(), password.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(raw: &[u8]) -> Request {
        match parse_head(raw) {
            Ok(Head::Complete(r)) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_get_with_credentials_and_a_query() {
        let r = complete(
            b"GET /metrics?x=1 HTTP/1.1\r\nHost: h\r\nauthorization: Basic YTpiOmM=\r\n\r\n",
        );
        assert_eq!(r.method, "GET");
        assert_eq!(r.path, "/metrics");
        assert_eq!(r.authorization.as_deref(), Some("Basic YTpiOmM="));
        // Split at the first colon: the password may hold colons.
        assert_eq!(
            basic_credentials(r.authorization.as_deref().unwrap()),
            Some(("a".into(), "b:c".into()))
        );
    }

    #[test]
    fn partial_full_and_malformed_heads() {
        assert!(matches!(
            parse_head(b"GET /metrics HTTP/1.1\r\nHo"),
            Ok(Head::Partial)
        ));
        let full = vec![b'a'; MAX_HEAD];
        let mut long = b"GET /".to_vec();
        long.extend_from_slice(&full[5..]);
        assert_eq!(parse_head(&long).unwrap_err().status, 431);
        let many: String = (0..40).map(|i| format!("X-{i}: v\r\n")).collect();
        let raw = format!("GET / HTTP/1.1\r\n{many}\r\n");
        assert_eq!(parse_head(raw.as_bytes()).unwrap_err().status, 431);
        assert_eq!(
            parse_head(b"GET / HTTP/2.0\r\n\r\n").unwrap_err().status,
            505
        );
        assert_eq!(parse_head(b"\x01\x02 x\r\n\r\n").unwrap_err().status, 400);
    }

    #[test]
    fn basic_credentials_refuses_what_is_not_basic() {
        assert_eq!(
            basic_credentials("basic dXNlcjpwdw=="),
            Some(("user".into(), "pw".into()))
        );
        assert_eq!(basic_credentials("Bearer dXNlcjpwdw=="), None);
        assert_eq!(basic_credentials("Basic !!!"), None);
        assert_eq!(basic_credentials("Basic dXNlcg=="), None); // "user": no colon
        assert_eq!(basic_credentials("Basic"), None);
    }
}
