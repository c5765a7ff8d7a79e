//! A headless-Chromium harness over the DevTools protocol, shared by the browser
//! tests: launch, load a file, run a check script, screenshot, and collect every
//! network request, console message and exception of the page.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};
use tungstenite::{Message, WebSocket};

const CHROMIUM: &str = "/usr/bin/chromium";
const TIMEOUT: Duration = Duration::from_secs(25);

pub fn artefact_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .join("test-artifacts");
    std::fs::create_dir_all(&dir).expect("create target/test-artifacts");
    dir
}

/// Kills the browser when the test ends, however it ends.
pub struct Browser(Child);

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn launch(profile: &Path) -> (Browser, String) {
    let chromium = std::env::var("DRIVELAB_CHROMIUM").unwrap_or_else(|_| CHROMIUM.to_string());
    assert!(
        Path::new(&chromium).exists(),
        "headless Chromium not found at {chromium}: install Debian's `chromium` package \
         (apt-get install -y chromium); the browser test needs it and does not skip"
    );
    let mut child = Command::new(&chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            "--disable-extensions",
            "--disable-default-apps",
            "--mute-audio",
            "--hide-scrollbars",
            "--remote-debugging-port=0",
            "--window-size=1280,900",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {chromium}: {e}"));
    let stderr = child.stderr.take().expect("stderr");
    let browser = Browser(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = Vec::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("DevTools listening on ") {
                let _ = tx.send(Ok(url.trim().to_string()));
            }
            lines.push(line);
        }
        let _ = tx.send(Err(lines.join("\n")));
    });
    match rx.recv_timeout(TIMEOUT) {
        Ok(Ok(url)) => (browser, url),
        Ok(Err(log)) => panic!("Chromium exited before DevTools came up:\n{log}"),
        Err(_) => panic!("Chromium did not announce its DevTools endpoint in {TIMEOUT:?}"),
    }
}

/// A minimal DevTools client over one browser-level websocket (flat sessions).
pub struct Cdp {
    ws: WebSocket<TcpStream>,
    next_id: u64,
    pub events: Vec<Value>,
    deadline: Instant,
}

impl Cdp {
    pub fn connect(url: &str) -> Cdp {
        let hostport = url
            .strip_prefix("ws://")
            .and_then(|r| r.split('/').next())
            .unwrap_or_else(|| panic!("unexpected DevTools URL {url}"));
        let stream = TcpStream::connect(hostport).expect("connect to DevTools");
        // The handshake may take a while on a loaded machine: only reads after it poll.
        stream.set_read_timeout(Some(TIMEOUT)).unwrap();
        let (ws, _) = tungstenite::client(url, stream).expect("websocket handshake");
        ws.get_ref()
            .set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        Cdp {
            ws,
            next_id: 1,
            events: Vec::new(),
            deadline: Instant::now() + TIMEOUT,
        }
    }

    pub fn read(&mut self) -> Option<Value> {
        assert!(Instant::now() < self.deadline, "browser test timed out");
        match self.ws.read() {
            Ok(Message::Text(t)) => {
                Some(serde_json::from_str(t.as_str()).expect("JSON from DevTools"))
            }
            Ok(_) => None,
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                None
            }
            Err(e) => panic!("DevTools connection failed: {e}"),
        }
    }

    pub fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        self.ws
            .send(Message::text(msg.to_string()))
            .expect("send to DevTools");
        loop {
            let Some(v) = self.read() else { continue };
            if v.get("id").and_then(Value::as_u64) == Some(id) {
                if let Some(err) = v.get("error") {
                    panic!("{method} failed: {err}");
                }
                return v["result"].clone();
            }
            self.events.push(v);
        }
    }

    pub fn wait_event(&mut self, method: &str) {
        if self.events.iter().any(|e| e["method"] == method) {
            return;
        }
        loop {
            let Some(v) = self.read() else { continue };
            let hit = v["method"] == method;
            self.events.push(v);
            if hit {
                return;
            }
        }
    }

    pub fn eval(&mut self, session: &str, expr: &str) -> Value {
        let r = self.call(
            Some(session),
            "Runtime.evaluate",
            json!({ "expression": expr, "returnByValue": true, "awaitPromise": true }),
        );
        if let Some(ex) = r.get("exceptionDetails") {
            panic!("script failed: {ex}");
        }
        r["result"]["value"].clone()
    }

    pub fn screenshot(&mut self, session: &str, path: &Path, height: f64) {
        let r = self.call(
            Some(session),
            "Page.captureScreenshot",
            json!({
                "format": "png",
                "captureBeyondViewport": true,
                "clip": { "x": 0, "y": 0, "width": 1280, "height": height, "scale": 1 }
            }),
        );
        let png = base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().expect("screenshot data"))
            .expect("base64 screenshot");
        std::fs::write(path, png).expect("write screenshot");
    }
}

/// Runs in the page: counts charts and data, clicks the toggle of group 1 and
/// reports what is visible before, while hidden, and after showing it again.
pub const CHECK_JS: &str = r#"(function(){
  function visible(sel){var n=0;document.querySelectorAll(sel).forEach(function(e){
    if(getComputedStyle(e).display!=='none'&&e.getBoundingClientRect().width>0)n++;});return n;}
  var r={};
  var charts=document.querySelectorAll('svg.dl-chart');
  r.charts=charts.length;
  r.chartIds=[];r.empty=[];r.marks=0;
  charts.forEach(function(c){
    r.chartIds.push(c.getAttribute('data-chart'));
    var data=c.querySelectorAll('.dl-data');var n=0;
    data.forEach(function(p){n+=+p.getAttribute('data-n');var b=p.getBBox();if(b.width<=0&&b.height<=0)n=-1e9;});
    if(data.length===0||n<=0)r.empty.push(c.getAttribute('data-chart'));
    r.marks+=n;
  });
  var bar=document.getElementById('dl-toggles');
  r.barShown=!!bar&&!bar.hidden&&bar.getBoundingClientRect().height>0;
  r.buttons=bar?bar.querySelectorAll('button[data-g]').length:0;
  r.g1Total=document.querySelectorAll('.dl-data.dl-g1').length;
  r.g1Before=visible('.dl-data.dl-g1');
  r.g1BlocksBefore=visible('.dl-block.dl-g1');
  r.g0Before=visible('.dl-data.dl-g0');
  if(bar&&bar.querySelector('button[data-g="1"]')){
    var b=bar.querySelector('button[data-g="1"]');
    b.click();
    r.g1Hidden=visible('.dl-data.dl-g1');
    r.g1MarksHidden=visible('.dl-mark.dl-g1');
    r.g1BlocksHidden=visible('.dl-block.dl-g1');
    r.g0WhileHidden=visible('.dl-data.dl-g0');
    r.pressedHidden=b.getAttribute('aria-pressed');
    b.click();
    r.g1After=visible('.dl-data.dl-g1');
    r.pressedAfter=b.getAttribute('aria-pressed');
    b.click();
    bar.querySelector('button[data-all]').click();
    r.g1AfterShowAll=visible('.dl-data.dl-g1');
  }
  r.height=document.documentElement.scrollHeight;
  return r;
})()"#;

/// What a page did while it was loaded and checked.
pub struct PageRun {
    /// The `file://` URL loaded.
    pub url: String,
    /// The check script's result.
    pub check: Value,
    /// URLs of every request the page made (the first is the page itself).
    pub requests: Vec<String>,
    /// Console errors and warnings, exceptions and error log entries.
    pub errors: Vec<String>,
}

/// Loads `html` in a fresh headless Chromium, runs `check_js`, saves
/// `<artefacts>/<name>.png` (the top 2600 px) and `<name>-full.png` (the whole page,
/// if `check_js` returns its `height`), and collects the page's events.
pub fn run_page(html: &Path, check_js: &str, name: &str) -> PageRun {
    let profile = tempfile::tempdir().unwrap();
    let page_url = format!("file://{}", html.display());
    let (_browser, ws_url) = launch(&profile.path().join("profile"));
    let mut cdp = Cdp::connect(&ws_url);
    let target = cdp.call(None, "Target.createTarget", json!({ "url": "about:blank" }));
    let target_id = target["targetId"].as_str().expect("targetId").to_string();
    let attached = cdp.call(
        None,
        "Target.attachToTarget",
        json!({ "targetId": target_id, "flatten": true }),
    );
    let session = attached["sessionId"]
        .as_str()
        .expect("sessionId")
        .to_string();
    let s = Some(session.as_str());
    for domain in [
        "Network.enable",
        "Runtime.enable",
        "Log.enable",
        "Page.enable",
    ] {
        cdp.call(s, domain, json!({}));
    }
    cdp.call(
        s,
        "Emulation.setDeviceMetricsOverride",
        json!({ "width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false }),
    );
    cdp.call(s, "Page.navigate", json!({ "url": page_url }));
    cdp.wait_event("Page.loadEventFired");

    let artefacts = artefact_dir();
    let r = cdp.eval(&session, check_js);
    cdp.screenshot(&session, &artefacts.join(format!("{name}.png")), 2600.0);
    if let Some(h) = r["height"].as_f64() {
        cdp.screenshot(
            &session,
            &artefacts.join(format!("{name}-full.png")),
            h.min(16000.0),
        );
    }
    // Give late events (errors, requests) a moment to arrive.
    let settle = Instant::now() + Duration::from_millis(300);
    while Instant::now() < settle {
        if let Some(v) = cdp.read() {
            cdp.events.push(v);
        }
    }
    // Only events of our page's session count.
    let events: Vec<&Value> = cdp
        .events
        .iter()
        .filter(|e| e["sessionId"].as_str() == Some(session.as_str()))
        .collect();
    let requests = events
        .iter()
        .filter(|e| e["method"] == "Network.requestWillBeSent")
        .filter_map(|e| e["params"]["request"]["url"].as_str())
        .map(str::to_string)
        .collect();
    let errors = events
        .iter()
        .filter(|e| {
            e["method"] == "Runtime.exceptionThrown"
                || (e["method"] == "Runtime.consoleAPICalled"
                    && matches!(
                        e["params"]["type"].as_str(),
                        Some("error" | "warning" | "assert")
                    ))
                || (e["method"] == "Log.entryAdded"
                    && matches!(
                        e["params"]["entry"]["level"].as_str(),
                        Some("error" | "warning")
                    ))
        })
        .map(|e| e.to_string())
        .collect();
    PageRun {
        url: page_url,
        check: r,
        requests,
        errors,
    }
}
