//! `drivelab serve` under load and through a database outage: 20 uploaders and 50
//! readers at once against 127.0.0.1 (bounded by count, not time), every accepted upload
//! present afterwards and no error page; and a PostgreSQL server that goes away answers
//! 503 and is used again when it returns; and many readers of one large uploaded run at
//! once cost one drawing of its page, not one each.

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

/// `bundle`'s run.json made large as a long suite's is: its steps repeated `times` over
/// (each with an id of its own), at second `n` (another run id).
fn large(bundle: &std::path::Path, n: u32, times: usize) -> Vec<u8> {
    let mut doc: serde_json::Value = serde_json::from_slice(&varied(bundle, n, &drive(0))).unwrap();
    let steps = doc["steps"].as_array().unwrap().clone();
    let mut all = Vec::new();
    for k in 0..times {
        for s in &steps {
            let mut s = s.clone();
            s["index"] = all.len().into();
            s["id"] = format!("{}-{k}", s["id"].as_str().unwrap()).into();
            all.push(s);
        }
    }
    doc["planned_steps"] = all.len().into();
    doc["steps"] = all.into();
    serde_json::to_vec(&doc).unwrap()
}

/// 16 readers open one large run's page at once (its page not drawn yet): it is drawn
/// once, the others wait for that drawing and get it from the cache, and the server's
/// peak memory stays near what one drawing of such a run took (16 drawings at once
/// would each hold the document and its report). Counted and measured by memory, not by
/// time.
#[test]
fn parallel_readers_of_one_large_run_cost_one_drawing() {
    const READERS: usize = 16;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let s = Server::start(db.to_str().unwrap());
    let bundle = bundle("quick", NVME);
    let (a, b) = (large(&bundle, 1, 40), large(&bundle, 2, 40));
    assert!(a.len() > 5 << 20, "{} bytes", a.len());
    let (status, answer) = s.upload(TOKEN, &a);
    assert_eq!(status, 201, "{answer}");
    let a = run_id_of(&answer);
    let (status, answer) = s.upload(TOKEN, &b);
    assert_eq!(status, 201, "{answer}");
    let b = run_id_of(&answer);

    // One drawing alone: the memory it takes.
    let before = s.peak_rss_kib();
    assert_eq!(
        s.get_render(&format!("/runs/{a}")),
        (200, Some("drawn".into()))
    );
    let one = s.peak_rss_kib();
    assert_eq!(
        s.get_render(&format!("/runs/{a}")),
        (200, Some("cached".into()))
    );

    let start = std::sync::Barrier::new(READERS);
    let renders: Vec<(u16, Option<String>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..READERS)
            .map(|_| {
                let (s, b, start) = (&s, &b, &start);
                scope.spawn(move || {
                    start.wait();
                    s.get_render(&format!("/runs/{b}"))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(
        renders.iter().all(|(status, _)| *status == 200),
        "{renders:?}"
    );
    let drawn = renders
        .iter()
        .filter(|(_, r)| r.as_deref() == Some("drawn"))
        .count();
    let cached = renders
        .iter()
        .filter(|(_, r)| r.as_deref() == Some("cached"))
        .count();
    assert_eq!((drawn, cached), (1, READERS - 1), "{renders:?}");
    let after = s.peak_rss_kib();
    // The second run's one drawing may add what the first's took again (the allocator
    // keeps freed memory), never 16 drawings' worth.
    let drawing = one.saturating_sub(before).max(16 << 10);
    assert!(
        after <= one + 2 * drawing,
        "peak {after} KiB after {READERS} readers; one drawing took {one} - {before} KiB"
    );
}
