//! The outbound policy on real sockets: a refused address is never connected to, whether the
//! URL writes it as an address (in any form) or names a host that resolves to it; an allowed
//! one is, and then a redirect is not followed and an error page's text reaches only callers
//! who may read it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use ars_domain::OutboundPolicy;
use ars_mcp::outbound::MappedResolver;
use ars_mcp::{Connection, McpError, Outbound, PeerText, Reach};

const TIMEOUT: Duration = Duration::from_secs(5);
const MARKER: &str = "internal-marker-5b1e";

/// A loopback HTTP server that answers every request with `response` and counts the
/// connections it accepted.
async fn canned(response: String) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&accepted);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            let response = response.clone();
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buffer = [0_u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buffer[..n]),
                    }
                }
                let _ = socket.write_all(response.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    (port, accepted)
}

fn answer(status: &str, headers: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n{headers}\
         connection: close\r\n\r\n{body}",
        body.len()
    )
}

fn checked(allow: &[String], resolver: Arc<MappedResolver>) -> Reach {
    Reach::Checked(Outbound::new(OutboundPolicy::new(allow).unwrap(), resolver))
}

async fn connect(url: &str, reach: &Reach, peer_text: PeerText) -> McpError {
    Connection::over_http("probe", url, &[], TIMEOUT, reach, peer_text)
        .await
        .expect_err("no MCP server here")
}

#[tokio::test]
async fn a_refused_address_is_never_connected_to_in_any_form() {
    let (port, accepted) = canned(answer("404 Not Found", "", MARKER)).await;
    let resolver = Arc::new(MappedResolver::default());
    resolver.set("rebind.test", &["127.0.0.1".parse().unwrap()]);
    let reach = checked(&[], Arc::clone(&resolver));
    for url in [
        format!("http://127.0.0.1:{port}/mcp"),
        format!("http://2130706433:{port}/mcp"),
        format!("http://0x7f.1:{port}/mcp"),
        format!("http://127.1:{port}/mcp"),
        format!("http://0.0.0.0:{port}/mcp"),
        format!("http://[::ffff:127.0.0.1]:{port}/mcp"),
        format!("http://localhost:{port}/mcp"),
        format!("http://rebind.test:{port}/mcp"),
        format!("http://REBIND.test:{port}/mcp"),
    ] {
        let error = connect(&url, &reach, PeerText::Withheld).await;
        assert_eq!(error.kind(), "refused_address", "{url}: {error}");
        assert!(error.to_string().contains("[network] allow"), "{error}");
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 0, "nothing was sent");

    // The name's refusal does not tell the address it resolved to.
    resolver.set("db.test", &["10.1.2.3".parse().unwrap()]);
    let error = connect("http://db.test/mcp", &reach, PeerText::Withheld).await;
    assert_eq!(error.kind(), "refused_address");
    assert!(!error.to_string().contains("10.1.2.3"), "{error}");
    // One refused answer among public ones refuses the name.
    let mixed: [IpAddr; 2] = [
        "93.184.215.14".parse().unwrap(),
        "127.0.0.1".parse().unwrap(),
    ];
    resolver.set("mixed.test", &mixed);
    let error = connect(
        &format!("http://mixed.test:{port}/"),
        &reach,
        PeerText::Withheld,
    )
    .await;
    assert_eq!(error.kind(), "refused_address", "{error}");
    assert_eq!(accepted.load(Ordering::SeqCst), 0);

    // Anywhere (an admin's server) it connects, and is told the page's text.
    let error = connect(
        &format!("http://127.0.0.1:{port}/mcp"),
        &Reach::Anywhere,
        PeerText::Shown,
    )
    .await;
    assert_eq!((error.kind(), error.status()), ("http_status", Some(404)));
    assert!(error.to_string().contains(MARKER), "{error}");
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_allowed_address_is_reached_and_its_text_shown_only_where_it_may_be() {
    let (port, accepted) = canned(answer("404 Not Found", "", MARKER)).await;
    let resolver = Arc::new(MappedResolver::default());
    resolver.set("tools.test", &["127.0.0.1".parse().unwrap()]);
    let reach = checked(&[format!("127.0.0.1:{port}")], resolver);
    for url in [
        format!("http://127.0.0.1:{port}/mcp"),
        format!("http://tools.test:{port}/mcp"),
    ] {
        let withheld = connect(&url, &reach, PeerText::Withheld).await;
        assert_eq!(
            (withheld.kind(), withheld.status()),
            ("http_status", Some(404))
        );
        assert!(!withheld.to_string().contains(MARKER), "{withheld}");
        let shown = connect(&url, &reach, PeerText::Shown).await;
        assert!(shown.to_string().contains(MARKER), "{shown}");
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 4);
    // Another port of the same address is not allowed.
    let error = connect(
        &format!("http://127.0.0.1:{}/mcp", port.wrapping_add(1)),
        &reach,
        PeerText::Withheld,
    )
    .await;
    assert_eq!(error.kind(), "refused_address");
}

#[tokio::test]
async fn a_redirect_is_reported_and_never_followed() {
    let (target, target_hits) = canned(answer("200 OK", "", "{}")).await;
    let location = format!("location: http://127.0.0.1:{target}/mcp\r\n");
    let (port, _) = canned(answer("307 Temporary Redirect", &location, MARKER)).await;
    let reach = checked(
        &[format!("127.0.0.1:{port}")],
        Arc::new(MappedResolver::default()),
    );
    let error = connect(
        &format!("http://127.0.0.1:{port}/mcp"),
        &reach,
        PeerText::Withheld,
    )
    .await;
    assert_eq!(
        (error.kind(), error.status()),
        ("http_status", Some(307)),
        "{error}"
    );
    let text = error.to_string();
    assert!(text.contains("redirect"), "{text}");
    assert!(
        !text.contains(MARKER) && !text.contains(&target.to_string()),
        "{text}"
    );
    // Not for an admin's server either.
    let error = connect(
        &format!("http://127.0.0.1:{port}/mcp"),
        &Reach::Anywhere,
        PeerText::Shown,
    )
    .await;
    assert_eq!(error.status(), Some(307));
    assert_eq!(target_hits.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_401_is_unauthorized_without_its_text() {
    let (port, _) = canned(answer("401 Unauthorized", "", MARKER)).await;
    let reach = checked(
        &[format!("127.0.0.1:{port}")],
        Arc::new(MappedResolver::default()),
    );
    let error = connect(
        &format!("http://127.0.0.1:{port}/mcp"),
        &reach,
        PeerText::Withheld,
    )
    .await;
    assert_eq!((error.kind(), error.status()), ("unauthorized", Some(401)));
    assert!(!error.to_string().contains(MARKER), "{error}");
}

#[tokio::test]
async fn a_saved_url_is_judged_as_a_connection_would_be() {
    let resolver = Arc::new(MappedResolver::default());
    resolver.set("rebind.test", &["127.0.0.1".parse().unwrap()]);
    resolver.set("public.test", &["93.184.215.14".parse().unwrap()]);
    let outbound = Outbound::new(OutboundPolicy::new(&["127.0.0.1:3001"]).unwrap(), resolver);
    for url in [
        "http://127.0.0.1:3002/mcp",
        "http://2130706433/mcp",
        "http://[::ffff:127.0.0.1]/",
        "http://rebind.test/mcp",
        "http://localhost:8080/mcp",
    ] {
        let error = outbound.check_url(url).await.unwrap_err();
        assert!(
            error.to_string().contains("[network] allow"),
            "{url}: {error}"
        );
    }
    for url in [
        "http://127.0.0.1:3001/mcp",
        "http://rebind.test:3001/mcp",
        "https://public.test/mcp",
        "https://93.184.215.14/mcp",
        // A name that does not resolve is judged when connecting.
        "https://nowhere.invalid/mcp",
    ] {
        assert!(outbound.check_url(url).await.is_ok(), "{url}");
    }
}

#[tokio::test]
async fn an_answer_that_is_not_mcp_is_not_quoted_whatever_it_says() {
    // Words that look like a connection failure must not make the body pass for one.
    let body = format!("connection refused: {MARKER}");
    let (port, _) = canned(format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    ))
    .await;
    let reach = checked(
        &[format!("127.0.0.1:{port}")],
        Arc::new(MappedResolver::default()),
    );
    let url = format!("http://127.0.0.1:{port}/mcp");
    let withheld = connect(&url, &reach, PeerText::Withheld).await;
    assert_eq!(withheld.kind(), "handshake", "{withheld}");
    assert!(!withheld.to_string().contains(MARKER), "{withheld}");
    let shown = connect(&url, &reach, PeerText::Shown).await;
    assert!(shown.to_string().contains(MARKER), "{shown}");
    // A closed port is unreachable, in the client's words.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let reach = checked(
        &[format!("127.0.0.1:{closed}")],
        Arc::new(MappedResolver::default()),
    );
    let error = connect(
        &format!("http://127.0.0.1:{closed}/mcp"),
        &reach,
        PeerText::Withheld,
    )
    .await;
    assert_eq!(error.kind(), "unreachable", "{error}");
}
