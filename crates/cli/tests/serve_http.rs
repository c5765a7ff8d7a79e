//! `drivelab serve` over HTTP, as browsers and test machines use it: a real server on
//! 127.0.0.x with an ephemeral port, real bundles, SQLite and PostgreSQL, and bad input.

mod report_db_common;
mod serve_common;

use serve_common::*;

const T7: Drive = Drive {
    model: "Samsung T7",
    serial: "S5SXNS0R1",
    firmware: "SVT01B6Q",
};
const T7_NEW_FW: Drive = Drive {
    model: "Samsung T7",
    serial: "S5SXNS0R1",
    firmware: "SVT02B6Q",
};
const SN850: Drive = Drive {
    model: "WD_BLACK SN850X 2000GB",
    serial: "23190Z800123",
    firmware: "620311WD",
};

/// A SQLite database with one run recorded by `drivelab run`, and that run's bundle.
fn recorded_db() -> (tempfile::TempDir, String, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let bundle = bundle("quick", NVME);
    let o = run_in(
        dir.path(),
        &[
            "db",
            "record",
            "--db",
            db.to_str().unwrap(),
            bundle.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let db = db.to_str().unwrap().to_string();
    (dir, db, bundle)
}

/// The newcomer's path: the recorded run is on the runs page with its charts, a second
/// machine uploads with a token and its run appears; an upload of the same bundle again is
/// recognised, not doubled.
fn recorded_and_uploaded_runs_are_served(db: &str, bundle: &std::path::Path, listen: &str) {
    let s = Server::start_on(db, listen, &[]);
    let (status, runs) = s.get("/");
    assert_eq!(status, 200, "{runs}");
    assert!(runs.contains("drivelab-sim nvme-tlc"), "{runs}");
    assert!(runs.contains("1 runs"), "{runs}");

    let o = run_in(
        &s.dir,
        &[
            "db",
            "push",
            &s.url,
            bundle.to_str().unwrap(),
            "--token",
            TOKEN,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("already"), "{}", stdout(&o));

    let (status, answer) = s.upload(TOKEN, &varied(bundle, 1, &SN850));
    assert_eq!(status, 201, "{answer}");
    let id = run_id_of(&answer);
    let (status, again) = s.upload(TOKEN, &varied(bundle, 1, &SN850));
    assert_eq!((status, run_id_of(&again)), (200, id.clone()), "{again}");
    assert!(again.contains("\"duplicate\":true"), "{again}");

    let (_, runs) = s.get("/runs");
    assert!(runs.contains("2 runs"), "{runs}");
    assert!(runs.contains(&format!("/runs/{id}")), "{runs}");
    let (status, page) = s.get(&format!("/runs/{id}"));
    assert_eq!(status, 200);
    assert!(page.contains("<svg"), "the run page has no charts");
    assert!(page.contains("WD_BLACK SN850X 2000GB"));
    assert!(
        page.contains("drivelab run quick --short sim:nvme-tlc,capacity=4G"),
        "no command to run it again"
    );
    let (status, json) = s.get(&format!("/runs/{id}/run.json"));
    assert_eq!(status, 200);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["target"]["serial"], "23190Z800123");
    let (status, report) = s.get(&format!("/runs/{id}/report.html"));
    assert_eq!(status, 200);
    assert!(report.starts_with("<!DOCTYPE html>") && report.contains("<svg"));
}

#[test]
fn sqlite_runs_recorded_here_and_uploaded_from_another_machine_are_served() {
    let (_dir, db, bundle) = recorded_db();
    recorded_and_uploaded_runs_are_served(&db, &bundle, "127.0.0.2:0");
}

#[test]
fn postgres_runs_recorded_here_and_uploaded_are_served() {
    let db = fresh_pg("serve_upload");
    let bundle = bundle("quick", NVME);
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(
        dir.path(),
        &["db", "record", "--db", &db, bundle.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    recorded_and_uploaded_runs_are_served(&db, &bundle, "127.0.0.1:0");
}

/// Filters, sorting, pages, a drive's history across firmware, and two drives compared.
#[test]
fn runs_are_filtered_sorted_paged_and_compared() {
    let (_dir, db, bundle) = recorded_db();
    let s = Server::start(&db);
    let mut ids = Vec::new();
    for n in 0..60 {
        let drive = match n % 3 {
            0 => &T7,
            1 => &T7_NEW_FW,
            _ => &SN850,
        };
        let (status, answer) = s.upload(TOKEN, &varied(&bundle, 100 + n, drive));
        assert_eq!(status, 201, "{answer}");
        ids.push(run_id_of(&answer));
    }
    let (_, page) = s.get("/runs?model=t7");
    assert!(page.contains("40 runs, page 1 of 1"), "{page}");
    assert!(!page.contains("SN850X"));
    let (_, page) = s.get("/runs?model=T7&firmware=svt02");
    assert!(page.contains("20 runs"), "{page}");
    let (_, page) = s.get("/runs");
    assert!(page.contains("61 runs, page 1 of 2"), "{page}");
    assert!(page.contains("rel=\"next\""));
    let (_, page2) = s.get("/runs?page=2");
    assert!(page2.contains("page 2 of 2"), "{page2}");
    // Newest first by default (the run recorded today), oldest first when asked.
    let first = |p: &str| p.find("data-run=\"").map(|i| p[i + 10..i + 26].to_string());
    let (_, asc) = s.get("/runs?sort=started&dir=asc");
    assert_eq!(first(&asc), Some(ids[0].clone()));
    assert_ne!(first(&page), first(&asc));
    let (_, by_fw) = s.get("/runs?sort=firmware&dir=desc&model=T7");
    assert!(by_fw.find("SVT02B6Q").unwrap() < by_fw.find("SVT01B6Q").unwrap());

    let (status, drive) = s.get("/drive?model=Samsung%20T7&serial=S5SXNS0R1");
    assert_eq!(status, 200, "{drive}");
    assert!(drive.contains("40 runs"), "{drive}");
    assert!(drive.contains("SVT01B6Q") && drive.contains("SVT02B6Q"));
    assert!(drive.contains("<svg"), "no history chart");

    let (status, cmp) = s.get(&format!("/compare?run={}&run={}", ids[0], ids[2]));
    assert_eq!(status, 200, "{cmp}");
    assert!(cmp.contains("id=\"dl-ratios\""), "{cmp}");
    assert!(cmp.contains("Samsung T7") && cmp.contains("SN850X"));
    assert!(cmp.contains("<svg"));
    // Runs 0 and 3 repeat one test of one drive: their spread is shown.
    let (_, cmp) = s.get(&format!(
        "/compare?run={}&run={}&run={}",
        ids[0], ids[3], ids[2]
    ));
    assert!(
        cmp.contains("Run-to-run spread: 2 runs of Samsung T7"),
        "{cmp}"
    );
}

/// Two drives compared as wholes: each headline number as the mean of the drive's runs,
/// the spread where a drive repeats a test, ratios, the charts overlaid, the picks on the
/// runs page making the same URL.
#[test]
fn two_drives_are_compared_with_their_runs_spread() {
    let (_dir, db, bundle) = recorded_db();
    let s = Server::start(&db);
    // The T7 ran the test three times (under two firmware), the SN850X once.
    for (n, d) in [(1, &T7), (2, &T7_NEW_FW), (3, &T7), (4, &SN850)] {
        let (status, answer) = s.upload(TOKEN, &varied(&bundle, n, d));
        assert_eq!(status, 201, "{answer}");
    }
    let (_, runs) = s.get("/runs");
    let t7 = "Samsung T7|S5SXNS0R1";
    let wd = "WD_BLACK SN850X 2000GB|23190Z800123";
    assert!(
        runs.contains(&format!("name=\"drive\" value=\"{t7}\"")),
        "{runs}"
    );
    let url = format!(
        "/compare?drive={}&drive={}",
        t7.replace(' ', "%20").replace('|', "%7C"),
        wd.replace(' ', "+")
    );
    let (status, cmp) = s.get(&url);
    assert_eq!(status, 200, "{cmp}");
    assert!(cmp.contains("Comparing 2 drives"), "{cmp}");
    assert!(cmp.contains("Samsung T7 (S5SXNS0R1): 3 runs"), "{cmp}");
    assert!(cmp.contains("(23190Z800123): 1 runs"), "{cmp}");
    assert!(cmp.contains("id=\"dl-drive-ratios\""), "{cmp}");
    // The same bundle's numbers each time: the T7's three runs agree exactly.
    assert!(cmp.contains("3 runs, "), "{cmp}");
    assert!(cmp.contains("spread 0.0 %"), "{cmp}");
    assert!(cmp.contains("class=\"num dl-ratio\">1.000<"), "{cmp}");
    assert!(cmp.contains("<svg"), "no overlaid charts");
    assert!(cmp.contains("(2 of 2 drives)"), "{cmp}");

    let (status, page) = s.get(&format!("/compare?drive={}", t7.replace(' ', "+")));
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("drive: pick 2 to 6 drives"), "{page}");
    let (status, page) = s.get("/compare?drive=Samsung+T7&drive=No+Such+Drive%7C");
    assert_eq!(status, 404, "{page}");
    let (status, page) = s.get("/compare?drive=Samsung+T7&run=0123456789abcdef");
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("runs or drives, not both"), "{page}");
}

/// `bundle` varied (as [`varied`]) onto a drive behind a USB bridge at `mbit_per_s`.
fn on_usb(bundle: &std::path::Path, n: u32, mode: &str, mbit_per_s: f64) -> Vec<u8> {
    let mut doc: serde_json::Value = serde_json::from_slice(&varied(bundle, n, &T7)).unwrap();
    doc["target"]["device"] = serde_json::json!({
        "disk": "sdb", "transport": mode, "nvme_transport": null, "chain": [],
        "link": {"kind": "usb", "pcie_current_gt_per_s": null, "pcie_current_width_lanes": null,
                 "pcie_max_gt_per_s": null, "pcie_max_width_lanes": null, "sata_gbit_per_s": null,
                 "usb_mbit_per_s": mbit_per_s, "full_duplex": true, "ceiling_bytes_per_s": null},
        "device_queue_depth": null, "block_nr_requests": null, "loop_direct_io": null
    });
    serde_json::to_vec(&doc).unwrap()
}

/// The runs table shows how each drive was connected and who uploaded each run, filters
/// and sorts on the connection; the run page names both.
#[test]
fn the_connection_and_the_uploader_are_shown_and_filtered() {
    let (_dir, db, bundle) = recorded_db();
    let s = Server::start(&db);
    let (status, uas) = s.upload(TOKEN, &on_usb(&bundle, 1, "usb-uas", 10000.0));
    assert_eq!(status, 201, "{uas}");
    let (status, bot) = s.upload(TOKEN, &on_usb(&bundle, 2, "usb-bot", 480.0));
    assert_eq!(status, 201, "{bot}");
    let (uas, bot) = (run_id_of(&uas), run_id_of(&bot));

    let (_, page) = s.get("/runs");
    assert!(page.contains(">USB 3.2 Gen 2, UAS<"), "{page}");
    assert!(page.contains(">USB 2.0, BOT<"), "{page}");
    assert_eq!(
        page.matches("<td class=\"dl-uploader\">rig1</td>").count(),
        2,
        "{page}"
    );
    let (_, page) = s.get("/runs?connection=uas");
    assert!(page.contains("1 runs"), "{page}");
    assert!(page.contains(&format!("data-run=\"{uas}\"")), "{page}");
    let (_, page) = s.get("/runs?connection=usb%202.0");
    assert!(page.contains(&format!("data-run=\"{bot}\"")) && page.contains("1 runs"));
    let (_, page) = s.get("/runs?connection=pcie");
    assert!(page.contains("0 runs"), "{page}");
    let (status, page) = s.get("/runs?sort=connection&dir=asc");
    assert_eq!(status, 200, "{page}");
    assert!(page.find(&bot).unwrap() < page.find(&uas).unwrap());

    let (_, run) = s.get(&format!("/runs/{uas}"));
    assert!(
        run.contains("<dt>Connection</dt><dd>USB 3.2 Gen 2, UAS</dd>"),
        "{run}"
    );
    assert!(run.contains("<dt>Uploaded by</dt><dd>rig1</dd>"), "{run}");
}

#[test]
fn bad_requests_are_refused_and_store_nothing() {
    let (_dir, db, bundle) = recorded_db();
    let s = Server::start_on(&db, "127.0.0.1:0", &["--max-body-mib", "1"]);
    let good = varied(&bundle, 5, &T7);
    let count = |s: &Server| {
        let (_, p) = s.get("/runs");
        p.split(" runs")
            .next()
            .and_then(|t| t.rsplit('>').next())
            .unwrap()
            .to_string()
    };
    assert_eq!(count(&s), "1");

    let (status, body) = s.upload("rig1-wrong-token-000000", &good);
    assert_eq!(status, 401, "{body}");
    let (status, _) = s.upload("", &good);
    assert_eq!(status, 401);
    let (status, body) = s.upload(TOKEN, b"{\"schema_version\": 1, \"suite\": ");
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("not a drivelab result bundle"), "{body}");
    let (status, _) = s.upload(TOKEN, &[0xff, 0xfe, 0x00]);
    assert_eq!(status, 400);
    // An oversize body is refused from its Content-Length, before it is read (a client
    // that waits for 100 Continue sees the 413 without sending it).
    let status = announce_body(&s, 2 << 20);
    assert!(status.starts_with("HTTP/1.1 413"), "{status}");
    // A control character in a device field: the record check of db import refuses it.
    let mut doc: serde_json::Value = serde_json::from_slice(&good).unwrap();
    doc["target"]["model"] = "evil\u{1b}[2J".into();
    let (status, body) = s.upload(TOKEN, &serde_json::to_vec(&doc).unwrap());
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("control character"), "{body}");
    assert_eq!(count(&s), "1", "a refused upload stored something");

    // Paths from requests reach nothing on disk.
    for path in [
        "/runs/..%2F..%2F..%2Fetc%2Fpasswd/run.json",
        "/runs/../../etc/passwd",
        "/..%2F..%2Fetc%2Fpasswd",
        "/runs/%2e%2e/report.html",
        "/static/../../etc/passwd",
    ] {
        let (status, body) = s.get(path);
        assert_eq!(status, 404, "{path}: {body}");
        assert!(!body.contains("root:"), "{path}");
    }
    // A bundle naming a traversal path as its target is data, shown escaped, nothing more.
    let mut doc: serde_json::Value = serde_json::from_slice(&good).unwrap();
    doc["target_arg"] = "../../../../tmp/drivelab-serve-escape".into();
    doc["target"]["path"] = "../../../../tmp/drivelab-serve-escape".into();
    let (status, body) = s.upload(TOKEN, &serde_json::to_vec(&doc).unwrap());
    assert_eq!(status, 201, "{body}");
    assert!(!std::path::Path::new("/tmp/drivelab-serve-escape").exists());

    // Script in a model name: escaped on every page that shows it.
    let evil = Drive {
        model: "<script>alert(1)</script>",
        serial: "\"><img src=x onerror=alert(2)>",
        firmware: "1.0",
    };
    let (status, body) = s.upload(TOKEN, &varied(&bundle, 9, &evil));
    assert_eq!(status, 201, "{body}");
    let id = run_id_of(&body);
    let drive = "/drive?model=%3Cscript%3Ealert(1)%3C%2Fscript%3E";
    for path in [
        "/runs".to_string(),
        format!("/runs/{id}"),
        drive.to_string(),
        format!(
            "/compare?run={id}&run={}",
            run_id_of(&s.upload(TOKEN, &good).1)
        ),
        "/runs?model=%3Cscript%3Ealert(3)%3C%2Fscript%3E".to_string(),
    ] {
        let (status, page) = s.get(&path);
        assert_eq!(status, 200, "{path}: {page}");
        assert!(!page.contains("<script>alert"), "{path} carries the script");
        assert!(!page.contains("<img src=x"), "{path} carries the tag");
    }
    let (_, page) = s.get(&format!("/runs/{id}"));
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));

    // Bad query parameters: 400 naming the parameter, not a 500.
    for (path, want) in [
        ("/runs?sort=evil", "sort: give one of"),
        ("/runs?page=0", "page:"),
        ("/runs?status=done", "status: give one of"),
        ("/runs?capacity=big", "capacity:"),
        ("/compare?run=a", "pick 2 to"),
        ("/drive", "model:"),
    ] {
        let (status, page) = s.get(path);
        assert_eq!(status, 400, "{path}: {page}");
        assert!(page.contains(want), "{path}: {page}");
    }
    let (status, _) = s.get("/runs/0000000000000000");
    assert_eq!(status, 404);
}

/// A bundle whose `suite` was changed by hand no longer matches its analysis: the
/// upload is refused (422 naming the suite), nothing is stored, and `db record` refuses
/// it with the same check.
#[test]
fn a_bundle_whose_suite_and_analysis_disagree_is_refused() {
    let (dir, db, bundle) = recorded_db();
    let s = Server::start_on(&db, "127.0.0.1:0", &[]);
    let good = varied(&bundle, 11, &T7);
    for suite in ["peak", "powerloss", "replay"] {
        let mut doc: serde_json::Value = serde_json::from_slice(&good).unwrap();
        doc["suite"] = suite.into();
        let (status, body) = s.upload(TOKEN, &serde_json::to_vec(&doc).unwrap());
        assert_eq!(status, 422, "{suite}: {body}");
        assert!(
            body.contains(&format!("not a {suite} suite's analysis")),
            "{suite}: {body}"
        );
    }
    let (_, runs) = s.get("/runs");
    let count = runs
        .split(" runs")
        .next()
        .and_then(|t| t.rsplit('>').next());
    assert_eq!(count, Some("1"), "a refused upload stored something");
    let (status, body) = s.upload(TOKEN, &good);
    assert_eq!(status, 201, "the unchanged bundle: {body}");

    let relabelled = dir.path().join("relabelled");
    std::fs::create_dir(&relabelled).unwrap();
    let mut doc: serde_json::Value = serde_json::from_slice(&good).unwrap();
    doc["suite"] = "peak".into();
    std::fs::write(relabelled.join("run.json"), doc.to_string()).unwrap();
    let o = run_in(
        dir.path(),
        &["db", "record", "--db", &db, relabelled.to_str().unwrap()],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("not a peak suite's analysis"),
        "{}",
        stderr(&o)
    );
}

/// Sends `request` (a whole HTTP/1.1 request) and returns the server's whole answer.
fn raw(s: &Server, request: &[u8]) -> String {
    use std::io::{Read, Write};
    let addr = s.url.trim_start_matches("http://");
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    // The server may answer (and close) before all of a refused body is sent.
    // (Not half-closed: the server would take that for a client gone; `Connection:
    // close` in the request ends the answer.)
    let _ = c.write_all(request);
    let mut answer = Vec::new();
    let _ = c.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

/// Each wrong request gets the status that says what is wrong, in the form of every other
/// refusal (a page, or JSON under /api/), and a duplicate token refuses the server's start.
#[test]
fn wrong_requests_get_the_status_that_names_the_fault() {
    let (_dir, db, _bundle) = recorded_db();
    let s = Server::start_on(&db, "127.0.0.1:0", &["--max-body-mib", "1"]);
    let addr = s.url.trim_start_matches("http://").to_string();
    // An empty run id is no run: 404, not the store's "invalid id" 422.
    for path in ["/runs//run.json", "/runs//report.html", "/runs/"] {
        let (status, page) = s.get(path);
        assert_eq!(status, 404, "{path}: {page}");
        assert!(page.contains("<p class=\"dl-error\">"), "{path}: {page}");
    }
    // A method the path does not take: 405 naming the ones it does, before any token.
    let answer = raw(&s, format!("PUT /api/bundles HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}").as_bytes());
    assert!(answer.starts_with("HTTP/1.1 405"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("\r\nallow: post"),
        "{answer}"
    );
    assert!(
        answer.contains("{\"error\":\"/api/bundles does not take this method"),
        "{answer}"
    );
    let answer = raw(
        &s,
        format!("DELETE /runs HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    );
    assert!(answer.starts_with("HTTP/1.1 405"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("\r\nallow: get,head"),
        "{answer}"
    );
    // A time filter that is no time: 400 naming the parameter.
    for (path, name) in [
        ("/runs?since=yesterday", "since"),
        ("/runs?until=2026-13-45", "until"),
        ("/runs?since=2026-03-01T12:00:00", "since"),
    ] {
        let (status, page) = s.get(path);
        assert_eq!(status, 400, "{path}: {page}");
        assert!(
            page.contains(&format!("{name}: give a UTC date or time")),
            "{path}: {page}"
        );
    }
    for good in ["/runs?since=2026-03-01", "/runs?until=2026-03-01T12:00:00Z"] {
        assert_eq!(s.get(good).0, 200, "{good}");
    }
    // A chunked body (no declared length) found over the limit while read: 413 as JSON.
    let chunk = vec![b' '; 512 << 10];
    let mut request = format!(
        "POST /api/bundles HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    .into_bytes();
    for _ in 0..3 {
        request.extend(format!("{:x}\r\n", chunk.len()).as_bytes());
        request.extend(&chunk);
        request.extend(b"\r\n");
    }
    request.extend(b"0\r\n\r\n");
    let answer = raw(&s, &request);
    assert!(
        answer.starts_with("HTTP/1.1 413"),
        "{}",
        &answer[..answer.len().min(300)]
    );
    assert!(
        answer.contains("content-type: application/json"),
        "{answer}"
    );
    assert!(
        answer.contains("{\"error\":\"the bundle is larger than this server takes"),
        "{answer}"
    );

    // Two uploaders with one token: refused at start, one line naming the file and line.
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, format!("# lab\nrig1 {TOKEN}\nrig2 {TOKEN}\n")).unwrap();
    let o = run_in(
        dir.path(),
        &[
            "serve",
            "--db",
            &db,
            "--listen",
            "127.0.0.1:0",
            "--tokens",
            tokens.to_str().unwrap(),
        ],
    );
    assert_usage(
        &o,
        &format!(
            "--tokens {}: line 3: the token of rig2 is rig1's too",
            tokens.display()
        ),
    );
}

/// Sends only the head of an upload of `len` bytes, asking to continue, and returns the
/// server's status line.
fn announce_body(s: &Server, len: usize) -> String {
    use std::io::{BufRead, Write};
    let addr = s.url.trim_start_matches("http://");
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    write!(
        c,
        "POST /api/bundles HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: {len}\r\nExpect: 100-continue\r\n\r\n"
    )
    .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(c).read_line(&mut line).unwrap();
    line
}

#[test]
fn uploads_are_refused_without_tokens_and_bad_options_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let db = db.to_str().unwrap();
    for (args, want) in [
        (
            vec!["serve", "--db", db, "--listen", "localhost"],
            "--listen 'localhost': give ADDRESS:PORT",
        ),
        (
            vec!["serve", "--db", db, "--tokens", "/nonexistent/tokens"],
            "--tokens /nonexistent/tokens: cannot read it",
        ),
        (
            vec!["db", "push", "https://example.org", "--token", TOKEN],
            "URL 'https://example.org': give the server as http://HOST:PORT",
        ),
        (
            vec!["db", "push", "http://127.0.0.1:1"],
            "--token: give the uploader's token",
        ),
        (
            vec!["serve", "--db", db, "--read-token", "short"],
            "--read-token: give at least 16",
        ),
    ] {
        assert_usage(&run_in(dir.path(), &args), want);
    }
    let short = dir.path().join("tokens");
    std::fs::write(&short, "rig1 short\n").unwrap();
    let o = run_in(
        dir.path(),
        &["serve", "--db", db, "--tokens", short.to_str().unwrap()],
    );
    assert_usage(&o, "line 1: the token of rig1 must be at least 16");
}

/// `drivelab run … --upload URL`: the finished run is on the server, under the id it is
/// recorded with locally; without a token nothing runs.
#[test]
fn a_run_uploads_its_bundle_when_it_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("server.sqlite");
    let s = Server::start(db.to_str().unwrap());
    let run = |token: Option<&str>| {
        let mut c = drivelab();
        c.args([
            "run", "quick", NVME, "--short", "--no-db", "--upload", &s.url,
        ])
        .current_dir(dir.path())
        .env("XDG_DATA_HOME", dir.path().join("xdg"))
        .env_remove("DRIVELAB_TOKEN");
        if let Some(t) = token {
            c.env("DRIVELAB_TOKEN", t);
        }
        c.output().unwrap()
    };
    let o = run(None);
    assert_usage(
        &o,
        "--token: give the uploader's token (or set DRIVELAB_TOKEN)",
    );
    assert!(
        !dir.path().join("drivelab-results").exists(),
        "a run started without a token"
    );

    let o = run(Some(TOKEN));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let id = out
        .lines()
        .find_map(|l| l.strip_prefix("uploaded run "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no upload said: {out}"));
    let (status, page) = s.get(&format!("/runs/{id}"));
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("<svg"));
}

/// `--read-token`: pages need the token (a browser's Basic password or a bearer token);
/// uploads still take the uploader's token.
#[test]
fn a_read_token_makes_the_results_private() {
    let (_dir, db, bundle) = recorded_db();
    let s = Server::start_on(
        &db,
        "127.0.0.1:0",
        &["--read-token", "read-0123456789abcdef"],
    );
    let (status, page) = s.get("/runs");
    assert_eq!(status, 401, "{page}");
    assert!(!page.contains("drivelab-sim nvme-tlc"));
    let with = |auth: &str, path: &str| {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        agent
            .get(&format!("{}{path}", s.url))
            .header("Authorization", auth)
            .call()
            .unwrap()
            .status()
            .as_u16()
    };
    // "lab:read-0123456789abcdef", as a browser sends the password it asked for.
    assert_eq!(
        with("Basic bGFiOnJlYWQtMDEyMzQ1Njc4OWFiY2RlZg==", "/runs"),
        200
    );
    assert_eq!(with("Bearer read-0123456789abcdef", "/runs"), 200);
    assert_eq!(with("Bearer wrong-0123456789abcdef", "/runs"), 401);
    assert_eq!(with("Bearer read-0123456789abcdef", "/no/such/page"), 404);
    assert_eq!(s.get("/../../etc/passwd").0, 401);
    let (status, answer) = s.upload(TOKEN, &varied(&bundle, 3, &T7));
    assert_eq!(status, 201, "{answer}");
}

/// A powerloss bundle before its check has no result yet: the server refuses its upload
/// (422, saying to check it first) and stores nothing, as `db record` and `db push` do.
#[test]
fn an_unchecked_powerloss_bundle_is_not_taken() {
    let (dir, db, _) = recorded_db();
    let jdir = tempfile::tempdir_in("/dev/shm").unwrap();
    let journal = jdir.path().join("journal");
    let target = dir.path().join("target.bin");
    let o = run_in(
        dir.path(),
        &[
            "run",
            "powerloss",
            target.to_str().unwrap(),
            "--journal",
            journal.to_str().unwrap(),
            "--out",
            "pl",
            "--short",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let body = std::fs::read(dir.path().join("pl/run.json")).unwrap();
    let s = Server::start(&db);
    let (status, answer) = s.upload(TOKEN, &body);
    assert_eq!(status, 422, "{answer}");
    assert!(answer.contains("check it first"), "{answer}");
    let (_, runs) = s.get("/runs");
    assert!(!runs.contains("powerloss"), "stored: {runs}");
}
