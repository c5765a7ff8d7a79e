//! `drivelab serve` in a real browser (headless Chromium over the DevTools protocol, the
//! report tests' harness): open the runs page, filter it, open a run and see its charts,
//! and compare two drives picked on the runs page (a run of each, then the drives as
//! wholes) — with no console error, no blocked resource and no request leaving the server.

mod report_db_common;
mod serve_common;

#[path = "../../report/tests/common/chromium.rs"]
mod chromium;

use serde_json::json;
use serve_common::*;

struct Page {
    cdp: chromium::Cdp,
    session: String,
}

impl Page {
    /// Runs `js` in the page and waits for the navigation it starts to load.
    fn navigate_by(&mut self, js: &str) {
        self.cdp
            .events
            .retain(|e| e["method"] != "Page.loadEventFired");
        self.cdp.eval(&self.session, js);
        self.cdp.wait_event("Page.loadEventFired");
    }

    fn open(&mut self, url: &str) {
        self.navigate_by(&format!("location.href = {}", json!(url)));
    }

    fn eval(&mut self, js: &str) -> serde_json::Value {
        self.cdp.eval(&self.session, js)
    }
}

#[test]
fn a_browser_filters_runs_opens_one_with_its_charts_and_compares_two_drives() {
    let (dir, db) = {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("results.sqlite");
        (dir, db.to_str().unwrap().to_string())
    };
    let bundle = bundle("quick", NVME);
    let s = Server::start(&db);
    let drives = [
        Drive {
            model: "Samsung T7",
            serial: "S1",
            firmware: "A1",
        },
        Drive {
            model: "Samsung T7",
            serial: "S1",
            firmware: "A2",
        },
        Drive {
            model: "WD_BLACK SN850X",
            serial: "W1",
            firmware: "B1",
        },
    ];
    for n in 0..9 {
        let (status, answer) = s.upload(TOKEN, &varied(&bundle, n, &drives[n as usize % 3]));
        assert_eq!(status, 201, "{answer}");
    }

    let profile = dir.path().join("chromium-profile");
    let (_browser, ws) = chromium::launch(&profile);
    let mut cdp = chromium::Cdp::connect(&ws);
    let target = cdp.call(None, "Target.createTarget", json!({ "url": "about:blank" }));
    let attached = cdp.call(
        None,
        "Target.attachToTarget",
        json!({ "targetId": target["targetId"], "flatten": true }),
    );
    let session = attached["sessionId"].as_str().unwrap().to_string();
    for domain in [
        "Network.enable",
        "Runtime.enable",
        "Log.enable",
        "Page.enable",
    ] {
        cdp.call(Some(&session), domain, json!({}));
    }
    let mut page = Page { cdp, session };

    page.open(&format!("{}/", s.url));
    assert_eq!(
        page.eval("document.querySelectorAll('#dl-runs tbody tr').length"),
        9
    );

    // Filter by model through the form, as a user types it.
    page.navigate_by(
        "document.querySelector('#dl-filter input[name=model]').value = 'sn850';\
         document.querySelector('#dl-filter button[type=submit]').click()",
    );
    assert_eq!(
        page.eval("document.querySelectorAll('#dl-runs tbody tr').length"),
        3
    );
    assert_eq!(
        page.eval("new URL(location.href).searchParams.get('model')"),
        "sn850"
    );

    // Open the first run: the report's charts, drawn and with data.
    page.navigate_by("document.querySelector('#dl-runs a.dl-run').click()");
    let charts = page.eval(
        "(function(){var c=document.querySelectorAll('svg.dl-chart');var n=0;\
         c.forEach(function(s){var d=s.querySelectorAll('.dl-data');\
         if(d.length&&s.getBoundingClientRect().width>0)n++;});return [c.length,n];})()",
    );
    assert!(charts[0].as_u64().unwrap() > 0, "no charts: {charts}");
    assert_eq!(
        charts[0], charts[1],
        "charts without visible data: {charts}"
    );
    assert!(page
        .eval("document.body.innerText")
        .as_str()
        .unwrap()
        .contains("WD_BLACK SN850X"));

    // Compare two drives: pick one run of each on the runs page, press Compare.
    page.open(&format!("{}/runs", s.url));
    page.navigate_by(
        "(function(){var rows=[...document.querySelectorAll('#dl-runs tbody tr')];\
         var t7=rows.find(r=>r.innerText.includes('Samsung T7'));\
         var wd=rows.find(r=>r.innerText.includes('SN850X'));\
         t7.querySelector('input[type=checkbox]').click();\
         wd.querySelector('input[type=checkbox]').click();\
         document.querySelector('#dl-compare-form button[type=submit]').click();})()",
    );
    assert_eq!(
        page.eval("new URL(location.href).searchParams.getAll('run').length"),
        2
    );
    let cmp = page.eval(
        "[document.querySelectorAll('#dl-ratios tbody tr').length,\
          document.querySelectorAll('svg.dl-chart').length,\
          document.querySelectorAll('#dl-toggles button[data-g]').length]",
    );
    assert!(cmp[0].as_u64().unwrap() > 0, "no ratios: {cmp}");
    assert!(cmp[1].as_u64().unwrap() > 0, "no overlaid charts: {cmp}");
    assert_eq!(cmp[2], 2, "one toggle per drive: {cmp}");
    page.cdp.screenshot(
        &page.session,
        &chromium::artefact_dir().join("serve-compare.png"),
        1600.0,
    );

    // Compare the two drives as wholes: pick each drive's box, press Compare.
    page.open(&format!("{}/runs", s.url));
    page.navigate_by(
        "(function(){var rows=[...document.querySelectorAll('#dl-runs tbody tr')];\
         rows.find(r=>r.innerText.includes('Samsung T7')).querySelector('input.dl-pick-drive').click();\
         rows.find(r=>r.innerText.includes('SN850X')).querySelector('input.dl-pick-drive').click();\
         document.querySelector('#dl-compare-form button[type=submit]').click();})()",
    );
    assert_eq!(
        page.eval("new URL(location.href).searchParams.getAll('drive').length"),
        2
    );
    let cmp = page.eval(
        "[document.querySelectorAll('#dl-drive-ratios tbody tr').length,\
          document.querySelectorAll('svg.dl-chart').length,\
          document.querySelectorAll('#dl-toggles button[data-g]').length]",
    );
    assert!(cmp[0].as_u64().unwrap() > 0, "no drive ratios: {cmp}");
    assert!(cmp[1].as_u64().unwrap() > 0, "no overlaid charts: {cmp}");
    assert_eq!(cmp[2], 2, "one toggle per drive: {cmp}");

    // Nothing failed in the page and nothing was fetched from anywhere but the server.
    let session = page.session.clone();
    let ours: Vec<&serde_json::Value> = page
        .cdp
        .events
        .iter()
        .filter(|e| e["sessionId"].as_str() == Some(session.as_str()))
        .collect();
    let errors: Vec<String> = ours
        .iter()
        .filter(|e| {
            e["method"] == "Runtime.exceptionThrown"
                || (e["method"] == "Log.entryAdded"
                    && matches!(
                        e["params"]["entry"]["level"].as_str(),
                        Some("error" | "warning")
                    ))
                || (e["method"] == "Runtime.consoleAPICalled"
                    && matches!(e["params"]["type"].as_str(), Some("error" | "warning")))
        })
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    for e in ours
        .iter()
        .filter(|e| e["method"] == "Network.requestWillBeSent")
    {
        let url = e["params"]["request"]["url"].as_str().unwrap_or("");
        assert!(url.starts_with(&s.url), "a request left the server: {url}");
    }
}
