//! One run: the report crate's own sections and charts for its bundle, under the run's
//! identity, its downloads (run.json, the standalone report) and the command that runs
//! the same test again. A run recorded without its run.json shows its identity and
//! headline numbers only.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use drivelab_report::bundles::{bundle_report, parse_run_doc, DriveRun};
use drivelab_store::{BundleInfo, RunRecord};
use drivelab_suites::bundle::RunDoc;
use maud::{html, Markup};

use super::capacity;
use crate::failure::Failure;
use crate::render::{Key, Source, View};
use crate::AppState;

/// The run with this id (or unique prefix); 404 when there is none.
pub async fn load(state: &AppState, id: String) -> Result<RunRecord, Failure> {
    if id.is_empty() {
        return Err(Failure::not_found("no run named: give /runs/ID"));
    }
    let shown = id.clone();
    state
        .db
        .with(move |s| s.get_run(&id))
        .await?
        .ok_or_else(|| Failure::not_found(format!("no run {shown} in this database")))
}

/// The run's bundle document, when the database keeps one that this build can read.
pub fn doc_of(r: &RunRecord) -> Option<RunDoc> {
    let text = serde_json::to_string(r.bundle_json.as_ref()?).ok()?;
    parse_run_doc(&text).ok()
}

/// `w` as one word for a POSIX shell.
fn shell_word(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// The command that makes this run again, as the bundle records it: `drivelab run SUITE`
/// on the same target (`--short` when the run was one, a replay's trace before it), or
/// for fio results the import of the same files; the other settings it used are listed
/// beside it ([`knobs`]).
pub fn command(doc: &RunDoc) -> String {
    use drivelab_suites::SuiteKind;
    match doc.suite {
        SuiteKind::Fio => import_command(doc),
        SuiteKind::Replay => run_command(doc, doc.knobs.get("trace").and_then(|v| v.as_str())),
        SuiteKind::Quick
        | SuiteKind::Peak
        | SuiteKind::Consistency
        | SuiteKind::Seqfill
        | SuiteKind::Iometer
        | SuiteKind::Mixed
        | SuiteKind::Powerloss => run_command(doc, None),
    }
}

/// `drivelab run SUITE [--short] [BEFORE_TARGET] TARGET`.
fn run_command(doc: &RunDoc, before_target: Option<&str>) -> String {
    let mut cmd = format!("drivelab run {}", shell_word(doc.suite.name()));
    if doc.knobs.get("short").and_then(|v| v.as_bool()) == Some(true) {
        cmd += " --short";
    }
    if let Some(arg) = before_target {
        cmd += &format!(" {}", shell_word(arg));
    }
    let target = doc.target_arg.as_deref().unwrap_or(&doc.target.path);
    if !target.is_empty() {
        cmd += &format!(" {}", shell_word(target));
    }
    cmd + &powerloss_flags(doc, target)
}

/// What `run powerloss` needs besides its target: a new journal on another drive, and a
/// device's `--destructive` (it writes to it). Empty for every other suite.
fn powerloss_flags(doc: &RunDoc, target: &str) -> String {
    use drivelab_engine::target::TargetKind;
    if doc.suite != drivelab_suites::SuiteKind::Powerloss {
        return String::new();
    }
    let mut flags = String::new();
    if doc.target.kind == TargetKind::BlockDevice && !target.is_empty() {
        flags += &format!(" {}", shell_word(&format!("--destructive={target}")));
    }
    flags + " --journal NEW-JOURNAL-ON-ANOTHER-DRIVE"
}

/// `drivelab import fio FILES… [--drive NAME] [--connection TEXT] [--logs DIR]` with
/// the files and options the import recorded; a sentence when it recorded no files (fio
/// itself ran the job: drivelab cannot run it again).
fn import_command(doc: &RunDoc) -> String {
    let Some(k) = drivelab_suites::fio::import::ImportKnobs::of(doc) else {
        return "imported from fio results; re-run fio with the job in run.json".into();
    };
    let sources = k.sources();
    if sources.is_empty() {
        return "imported from fio results; re-run fio with the job in run.json".into();
    }
    let mut cmd = "drivelab import fio".to_string();
    for s in sources {
        cmd += &format!(" {}", shell_word(s));
    }
    for (flag, v) in k.options() {
        cmd += &format!(" {flag} {}", shell_word(v));
    }
    cmd
}

/// The suite's settings as the bundle records them.
fn knobs(doc: &RunDoc) -> Markup {
    let empty = serde_json::Map::new();
    let knobs = doc.knobs.as_object().unwrap_or(&empty);
    html! {
        details {
            summary { "The settings it ran with (" (knobs.len()) ")" }
            table.dl-list.dl-knobs {
                @for (k, v) in knobs { tr { td { (k) } td { (v.to_string()) } } }
            }
        }
    }
}

fn identity(r: &RunRecord) -> Markup {
    let or_dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "–".into());
    let rows: [(&str, String); 13] = [
        ("Run", r.run_id.clone()),
        ("Suite", r.suite.clone()),
        ("Status", r.status.clone()),
        ("Started (UTC)", r.started_at.clone()),
        ("Model", or_dash(&r.device_model)),
        ("Firmware", or_dash(&r.device_firmware)),
        ("Serial", or_dash(&r.device_serial)),
        ("Capacity", capacity(r.device_capacity_bytes)),
        ("Connection", or_dash(&r.device_connection)),
        ("Device", r.device_path.clone()),
        ("Host", r.host_name.clone()),
        (
            "Uploaded by",
            r.uploaded_by
                .clone()
                .unwrap_or_else(|| "– (not uploaded)".into()),
        ),
        ("drivelab", r.tool_version.clone()),
    ];
    html! {
        h1 #dl-run-title { "Run " (r.run_id) }
        dl #dl-identity { @for (k, v) in rows { dt { (k) } dd { (v) } } }
    }
}

fn metrics_table(r: &RunRecord) -> Markup {
    html! {
        table.dl-list #dl-metrics {
            thead { tr { th { "Headline" } th { "Value" } th { "Unit" } } }
            tbody { @for m in &r.metrics {
                tr { td { (m.name) } td.num { (drivelab_report::fmt_number(m.value, 1)) } td { (m.unit) } }
            } }
        }
    }
}

/// The stored run.json bytes of these runs in all (unknown sizes as the budget's guess).
pub async fn bundle_bytes(state: &AppState, ids: Vec<String>) -> Result<Option<u64>, Failure> {
    state
        .db
        .with(move |s| {
            let mut total = Some(0u64);
            for id in &ids {
                let info = s.bundle_info(id)?;
                total = match (
                    total,
                    info.and_then(|i| if i.has_bundle { i.bytes } else { Some(0) }),
                ) {
                    (Some(t), Some(b)) => Some(t.saturating_add(b)),
                    _ => None,
                };
            }
            Ok(total)
        })
        .await
}

/// The stored run.json's identity of the run with this id (or unique prefix); 404 when
/// there is none.
async fn info(state: &AppState, id: String) -> Result<BundleInfo, Failure> {
    if id.is_empty() {
        return Err(Failure::not_found("no run named: give /runs/ID"));
    }
    let shown = id.clone();
    state
        .db
        .with(move |s| s.bundle_info(&id))
        .await?
        .ok_or_else(|| Failure::not_found(format!("no run {shown} in this database")))
}

/// The run's page as HTML (the report of its bundle under its identity).
fn draw_page(r: &RunRecord) -> Result<String, Failure> {
    let title = format!("Run {}", r.run_id);
    let Some(doc) = doc_of(r) else {
        let body = html! {
            (identity(r))
            p { "The database keeps this run's headline numbers but not a run.json this build can read, so its charts cannot be drawn." }
            (metrics_table(r))
        };
        return Ok(super::layout::page_html(&title, body));
    };
    let head = html! {
        (identity(r))
        p.dl-downloads {
            "Download: "
            a href={ "/runs/" (r.run_id) "/run.json" } download { "run.json" } " · "
            a href={ "/runs/" (r.run_id) "/report.html" } download { "report.html" }
        }
        p { "Run it again: " code #dl-command { (command(&doc)) } }
        (knobs(&doc))
    };
    let html = render_report(&[DriveRun::new(None, doc)])?;
    Ok(super::layout::report_with_head_html(html, head))
}

/// The report download of the run as HTML.
fn draw_report(r: &RunRecord) -> Result<String, Failure> {
    let doc = doc_of(r).ok_or_else(|| {
        Failure::not_found(format!(
            "the database keeps no readable run.json for run {}",
            r.run_id
        ))
    })?;
    render_report(&[DriveRun::new(None, doc)])
}

/// A view of the run, from the page cache or drawn (off the async workers, within the
/// drawing budget: [`crate::render`]).
async fn view(
    state: &Arc<AppState>,
    id: String,
    view: View,
    draw: fn(&RunRecord) -> Result<String, Failure>,
) -> Result<(String, Bytes, Source), Failure> {
    let info = info(state, id).await?;
    let key = Key {
        run_id: info.run_id.clone(),
        sha256: info.sha256.clone(),
        view,
    };
    let st = state.clone();
    let run_id = info.run_id.clone();
    let (body, source) = state
        .renders
        .page(key, info.bytes, || async move {
            let r = load(&st, run_id).await?;
            tokio::task::spawn_blocking(move || draw(&r))
                .await
                .map_err(|_| {
                    Failure::new(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "drawing the run's report failed unexpectedly",
                    )
                })?
        })
        .await?;
    Ok((info.run_id, body, source))
}

fn with_source(mut r: Response, source: Source) -> Response {
    r.headers_mut().insert(
        "x-drivelab-render",
        HeaderValue::from_static(source.header_value()),
    );
    r
}

pub async fn page(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, Failure> {
    let (_, body, source) = view(&state, id, View::Page, draw_page).await?;
    Ok(with_source(
        super::layout::html_response(StatusCode::OK, body),
        source,
    ))
}

/// The report crate's document for these bundles.
pub fn render_report(runs: &[DriveRun]) -> Result<String, Failure> {
    bundle_report(runs).render().map_err(|e| {
        Failure::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the report cannot be drawn: {e}"),
        )
    })
}

fn attachment(body: impl IntoResponse, content_type: &'static str, name: &str) -> Response {
    let mut r = (StatusCode::OK, body).into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    // Run ids are letters, digits, '-', '_' and '.' (checked by the store).
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

pub async fn run_json(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, Failure> {
    let info = info(&state, id).await?;
    let _permit = state.renders.permit(info.bytes).await?;
    let r = load(&state, info.run_id).await?;
    let Some(doc) = &r.bundle_json else {
        return Err(Failure::not_found(format!(
            "the database keeps no run.json for run {}",
            r.run_id
        )));
    };
    let text = serde_json::to_string_pretty(doc).unwrap_or_default();
    Ok(attachment(
        text,
        "application/json",
        &format!("{}-run.json", r.run_id),
    ))
}

pub async fn report_html(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, Failure> {
    let (run_id, body, source) = view(&state, id, View::Report, draw_report).await?;
    let mut resp = attachment(
        body,
        "text/html; charset=utf-8",
        &format!("{run_id}-report.html"),
    );
    resp.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'",
        ),
    );
    Ok(with_source(resp, source))
}

#[cfg(test)]
mod tests {
    use drivelab_engine::target::TargetInfo;
    use drivelab_suites::powerloss::PowerLoss;

    fn doc(kind: &str, path: &str) -> drivelab_suites::bundle::RunDoc {
        let info: TargetInfo = serde_json::from_value(serde_json::json!({
            "kind": kind, "path": path, "capacity_bytes": 1u64 << 30,
            "logical_sector_bytes": 512, "physical_sector_bytes": 512, "rotational": null,
            "scheduler": null, "model": null, "serial": null, "firmware": null,
            "filesystem": null, "in_memory": null, "created_by_drivelab": false,
            "simulated": null
        }))
        .unwrap();
        drivelab_suites::runner::new_doc_for(&PowerLoss::new(7), &[], &info, Some(path.into()))
    }

    #[test]
    fn powerloss_again_has_its_journal_and_a_devices_destructive() {
        assert_eq!(
            super::command(&doc("block_device", "/dev/sdx")),
            "drivelab run powerloss /dev/sdx --destructive=/dev/sdx --journal NEW-JOURNAL-ON-ANOTHER-DRIVE"
        );
        assert_eq!(
            super::command(&doc("file", "/mnt/t.bin")),
            "drivelab run powerloss /mnt/t.bin --journal NEW-JOURNAL-ON-ANOTHER-DRIVE"
        );
    }

    /// An import with `--logs` is run again with them (the review's page dropped them,
    /// so the command re-imported the results without a single series).
    #[test]
    fn an_imports_command_has_every_option_it_was_given() {
        use drivelab_suites::fio::import::{import_set, Body, Input, Options};
        let text = include_str!("../../../../fuzz/corpus/fio_result/null-json.json");
        let logs = tempfile::tempdir().unwrap();
        // fio's per-second IOPS log of the job ("x", 5 ms long): one row.
        std::fs::write(logs.path().join("x_iops.1.log"), "5, 1000, 0, 4096, 0\n").unwrap();
        let input = |source: &str| Input {
            body: Body::Text(text.to_string()),
            source: source.into(),
            dir: None,
        };
        let import = |o: &Options| {
            let d = import_set(&[input("sw/qd1.json")], o).unwrap();
            // What the page shows is what the stored bundle says.
            serde_json::from_value(serde_json::to_value(&d).unwrap()).unwrap()
        };
        let doc = import(&Options {
            drive: Some("SSD A"),
            connection: Some("USB UAS"),
            logs: Some(logs.path()),
            ..Options::default()
        });
        assert_eq!(
            super::command(&doc),
            format!(
                "drivelab import fio sw/qd1.json --drive 'SSD A' --connection 'USB UAS' --logs {}",
                super::shell_word(&logs.path().display().to_string())
            )
        );
        // Without --logs (each result's logs beside it), none is added.
        let doc = import(&Options::default());
        assert_eq!(super::command(&doc), "drivelab import fio sw/qd1.json");
    }
}
