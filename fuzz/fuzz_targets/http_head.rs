//! Fuzz target `http_head`: any bytes (up to serve's 8 KiB head buffer) into serve's request-head
//! parser, `http::head::parse_head` (src/serve/http/head.rs, included as it is), and any text into
//! `basic_credentials`. They must return, never panic; a complete request has a path without its
//! query; a refusal is 400, 431 or 505; only a full buffer without a whole head is 431-by-size.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../src/serve/http/head.rs"]
#[allow(dead_code)]
mod head;

fuzz_target!(|data: &[u8]| {
    let data = &data[..data.len().min(head::MAX_HEAD)];
    match head::parse_head(data) {
        Ok(head::Head::Complete(request)) => {
            assert!(!request.path.contains('?'), "{request:?}");
            if let Some(a) = &request.authorization {
                if let Some((user, _)) = head::basic_credentials(a) {
                    assert!(!user.contains(':'), "{request:?}");
                }
            }
        }
        Ok(head::Head::Partial) => assert!(data.len() < head::MAX_HEAD),
        Err(response) => assert!(
            matches!(response.status, 400 | 431 | 505),
            "status {}",
            response.status
        ),
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = head::basic_credentials(text);
    }
});
