use super::*;

fn target(url: &str) -> Target {
    Target::of_url(url).unwrap()
}

fn ip(text: &str) -> Host {
    Host::Ip(text.parse().unwrap())
}

fn socket(text: &str) -> SocketAddr {
    text.parse().unwrap()
}

#[test]
fn hosts_are_read_as_the_http_client_reads_them() {
    let cases = [
        ("http://127.0.0.1:3001/mcp", ip("127.0.0.1"), 3001),
        ("http://2130706433/mcp", ip("127.0.0.1"), 80),
        ("http://0x7f.1:8080/", ip("127.0.0.1"), 8080),
        ("http://0x7f000001/", ip("127.0.0.1"), 80),
        ("http://127.1/", ip("127.0.0.1"), 80),
        ("http://0177.0.0.1/", ip("127.0.0.1"), 80),
        ("http://0/", ip("0.0.0.0"), 80),
        ("http://0.0.0.0:9000/", ip("0.0.0.0"), 9000),
        ("https://[::1]/mcp", ip("::1"), 443),
        ("http://[::ffff:127.0.0.1]:1/", ip("::ffff:127.0.0.1"), 1),
        ("http://[::ffff:7f00:1]/", ip("::ffff:127.0.0.1"), 80),
        (
            "http://LOCALHOST:3000/",
            Host::Name("localhost".into()),
            3000,
        ),
        (
            "https://mcp.example.com/mcp?x=1",
            Host::Name("mcp.example.com".into()),
            443,
        ),
    ];
    for (url, host, port) in cases {
        assert_eq!(target(url), Target { host, port }, "{url}");
    }
    assert!(Target::of_url("ftp://x/").is_err());
    assert!(Target::of_url("not a url").is_err());
}

#[test]
fn every_loopback_form_a_plain_user_might_write_is_refused() {
    let policy = OutboundPolicy::default();
    for url in [
        "http://127.0.0.1:3001/mcp",
        "http://2130706433:3001/",
        "http://0x7f.1:3001/",
        "http://127.1:3001/",
        "http://0.0.0.0:3001/",
        "http://[::1]:3001/",
        "http://[::]:3001/",
        "http://[::ffff:127.0.0.1]:3001/",
        "http://[::ffff:0.0.0.0]:3001/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.5/",
        "http://100.100.100.200/",
        "http://[fd00::1]/",
        "http://[fe80::1]/",
        "http://224.0.0.1/",
        "http://255.255.255.255/",
        "http://[64:ff9b::7f00:1]/",
    ] {
        let Target { host, port } = target(url);
        let Host::Ip(address) = host else {
            panic!("{url} is an address")
        };
        assert!(
            policy.check(SocketAddr::new(address, port)).is_err(),
            "{url} was allowed"
        );
    }
    assert!(policy.check(socket("93.184.215.14:443")).is_ok());
    assert!(policy.check(socket("[2606:4700::1111]:443")).is_ok());
}

#[test]
fn a_refusal_names_the_address_the_rule_and_the_way_out() {
    let policy = OutboundPolicy::default();
    let refused = policy.check(socket("127.0.0.1:3001")).unwrap_err();
    assert_eq!(refused.rule(), AddressRule::Loopback);
    assert_eq!(
        refused.to_string(),
        "the address 127.0.0.1 is a loopback address (127.0.0.0/8), which a URL given by a \
         non-admin may not reach; an admin can allow it with [network] allow"
    );
    let mapped = policy.check(socket("[::ffff:10.0.0.1]:80")).unwrap_err();
    assert!(
        mapped.to_string().starts_with(
            "the address ::ffff:10.0.0.1 is an IPv4-mapped form of 10.0.0.1, a private address \
             (RFC 1918) (10.0.0.0/8)"
        ),
        "{mapped}"
    );
    // Through a name, the address itself is not told.
    let named = policy
        .check(socket("10.9.8.7:80"))
        .unwrap_err()
        .via_name("db.internal");
    let text = named.to_string();
    assert!(
        text.starts_with("`db.internal` resolves to a private address (RFC 1918) (10.0.0.0/8)"),
        "{text}"
    );
    assert!(!text.contains("10.9.8.7"), "{text}");
}

#[test]
fn admins_exceptions_admit_one_port_or_a_whole_network() {
    let policy =
        OutboundPolicy::new(&["127.0.0.1:3001", "10.0.0.0/8", "[::1]:4000", "192.168.1.7"])
            .unwrap();
    assert_eq!(policy.allowed().len(), 4);
    assert!(policy.check(socket("127.0.0.1:3001")).is_ok());
    assert!(
        policy.check(socket("[::ffff:127.0.0.1]:3001")).is_ok(),
        "the mapped form is the same address"
    );
    assert!(
        policy.check(socket("127.0.0.1:3002")).is_err(),
        "another port"
    );
    assert!(
        policy.check(socket("127.0.0.2:3001")).is_err(),
        "another address"
    );
    assert!(policy.check(socket("10.200.0.1:5432")).is_ok());
    assert!(policy.check(socket("[::ffff:10.1.1.1]:80")).is_ok());
    assert!(policy.check(socket("11.0.0.1:80")).is_ok(), "public anyway");
    assert!(policy.check(socket("172.16.0.1:80")).is_err());
    assert!(policy.check(socket("[::1]:4000")).is_ok());
    assert!(policy.check(socket("[::1]:4001")).is_err());
    assert!(policy.check(socket("192.168.1.7:1")).is_ok());
    assert!(policy.check(socket("192.168.1.8:1")).is_err());
}

#[test]
fn exceptions_that_do_not_read_are_named() {
    for (entry, says) in [
        ("localhost:3001", "host names are not accepted"),
        ("10.1.0.0/8", "write 10.0.0.0/8"),
        ("10.0.0.0/40", "prefix length"),
        ("127.0.0.1:99999", "neither an address with a port"),
        ("", "neither"),
    ] {
        let err = OutboundPolicy::new(&["127.0.0.1:1", entry]).unwrap_err();
        assert!(err.contains(says), "{entry}: {err}");
    }
    assert_eq!(
        AllowEntry::parse(" 10.0.0.0/8 ").unwrap().to_string(),
        "10.0.0.0/8"
    );
    assert_eq!(
        AllowEntry::parse("[::1]:3001").unwrap().to_string(),
        "[::1]:3001"
    );
}
