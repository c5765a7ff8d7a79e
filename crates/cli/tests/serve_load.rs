//! `drivelab serve` under load and through a database outage: 20 uploaders and 50
//! readers at once against 127.0.0.1 (bounded by count, not time), every accepted upload
//! present afterwards and no error page; and a PostgreSQL server that goes away answers
//! 503 and is used again when it returns.

mod report_db_common;
mod serve_common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serve_common::*;

const UPLOADERS: u32 = 20;
const UPLOADS_EACH: u32 = 5;
const READERS: u32 = 50;
const READS_EACH: u32 = 8;

fn load(db: &str) {
    let bundle = bundle("quick", NVME);
    let s = Server::start(db);
    // One run first, so readers have a run and a drive to open.
    let (status, answer) = s.upload(TOKEN, &varied(&bundle, 0, &drive(0)));
    assert_eq!(status, 201, "{answer}");
    let first = run_id_of(&answer);
    let accepted: Mutex<Vec<String>> = Mutex::new(vec![first.clone()]);
    let failures: Mutex<Vec<String>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for u in 0..UPLOADERS {
            let (s, bundle, accepted, failures) = (&s, &bundle, &accepted, &failures);
            scope.spawn(move || {
                for k in 0..UPLOADS_EACH {
                    let n = 1 + u * UPLOADS_EACH + k;
                    let (status, answer) = s.upload(TOKEN, &varied(bundle, n, &drive(n)));
                    match status {
                        201 => accepted.lock().unwrap().push(run_id_of(&answer)),
                        _ => failures
                            .lock()
                            .unwrap()
                            .push(format!("upload {n}: {status} {answer}")),
                    }
                }
            });
        }
        for r in 0..READERS {
            let (s, first, failures) = (&s, &first, &failures);
            scope.spawn(move || {
                let pages = [
                    "/".to_string(),
                    "/runs?page=2".to_string(),
                    "/runs?model=load&sort=firmware&dir=asc".to_string(),
                    format!("/runs/{first}"),
                    "/drive?model=load%20drive%200".to_string(),
                ];
                for k in 0..READS_EACH {
                    let path = &pages[((r + k) as usize) % pages.len()];
                    let (status, body) = s.get(path);
                    if status != 200 || body.contains("class=\"dl-error\"") {
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("GET {path}: {status}"));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} failures, e.g. {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    let accepted = accepted.into_inner().unwrap();
    assert_eq!(accepted.len() as u32, 1 + UPLOADERS * UPLOADS_EACH);
    for id in &accepted {
        let (status, _) = s.get(&format!("/runs/{id}/run.json"));
        assert_eq!(status, 200, "accepted run {id} is missing");
    }
    let (_, page) = s.get("/runs");
    assert!(
        page.contains(&format!("{} runs", accepted.len())),
        "the count is off"
    );
}

fn drive(n: u32) -> Drive<'static> {
    const MODELS: [&str; 3] = ["load drive 0", "load drive 1", "load drive 2"];
    const FIRMWARE: [&str; 2] = ["FW1", "FW2"];
    Drive {
        model: MODELS[(n % 3) as usize],
        serial: "SERIAL",
        firmware: FIRMWARE[(n % 2) as usize],
    }
}

#[test]
fn sqlite_takes_20_uploaders_and_50_readers_at_once() {
    let dir = tempfile::tempdir().unwrap();
    load(dir.path().join("load.sqlite").to_str().unwrap());
}

#[test]
fn postgres_takes_20_uploaders_and_50_readers_at_once() {
    load(&fresh_pg("serve_load"));
}

/// A TCP relay to the PostgreSQL test server that the test can cut and restore: the
/// database "goes away" (every connection cut, new ones refused) without touching the
/// shared server.
struct Relay {
    addr: std::net::SocketAddr,
    up: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Relay {
    fn to(target: String) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let up = Arc::new(AtomicBool::new(true));
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let (up2, open2) = (up.clone(), open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                if !up2.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&target) else {
                    continue;
                };
                let mut o = open2.lock().unwrap();
                o.push(client.try_clone().unwrap());
                o.push(server.try_clone().unwrap());
                pipe(client.try_clone().unwrap(), server.try_clone().unwrap());
                pipe(server, client);
            }
        });
        Relay { addr, up, open }
    }

    fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        for s in self.open.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    fn restore(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

fn pipe(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 16384];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 || to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Both);
    });
}

#[test]
fn a_database_that_goes_away_gives_503_and_is_used_again_when_it_returns() {
    let url = fresh_pg("serve_outage");
    // postgres://user:pw@HOST:PORT/db?options=…: the same through the relay.
    let (head, rest) = url.split_once('@').unwrap();
    let (hostport, tail) = rest.split_once('/').unwrap();
    let relay = Relay::to(hostport.to_string());
    let relayed = format!("{head}@{}/{tail}", relay.addr);
    let bundle = bundle("quick", NVME);
    let s = Server::start(&relayed);
    let (status, _) = s.upload(TOKEN, &varied(&bundle, 1, &drive(1)));
    assert_eq!(status, 201);
    assert_eq!(s.get("/runs").0, 200);

    relay.cut();
    let (status, page) = s.get("/runs");
    assert_eq!(status, 503, "{page}");
    let (status, answer) = s.upload(TOKEN, &varied(&bundle, 2, &drive(2)));
    assert_eq!(status, 503, "{answer}");
    assert_eq!(s.get("/runs").0, 503, "a refused reconnection is 503 too");

    relay.restore();
    let (status, page) = s.get("/runs");
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("1 runs"), "{page}");
    let (status, answer) = s.upload(TOKEN, &varied(&bundle, 2, &drive(2)));
    assert_eq!(status, 201, "{answer}");
}
