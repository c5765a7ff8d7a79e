//! Inline CSS, JavaScript and the Content-Security-Policy of the HTML report.

/// Nothing may be fetched: no scripts, styles, fonts, images or connections
/// from anywhere; only the inline style and script of the document itself run.
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src 'none'; font-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'";

/// Toggle logic: a button flips `dl-hide-N` on <body>; CSS does the hiding.
/// The bar starts `hidden` so that it only shows where scripts run.
pub const JS: &str = r#"(function(){
var bar=document.getElementById('dl-toggles');if(!bar)return;bar.hidden=false;
bar.addEventListener('click',function(e){var b=e.target.closest('button');if(!b)return;
if(b.hasAttribute('data-all')){document.body.className=document.body.className.replace(/\bdl-hide-\d+\b/g,'').trim();
bar.querySelectorAll('button[data-g]').forEach(function(x){x.setAttribute('aria-pressed','true');});return;}
var hidden=document.body.classList.toggle('dl-hide-'+b.getAttribute('data-g'));
b.setAttribute('aria-pressed',hidden?'false':'true');});
})();"#;

/// Base stylesheet.
pub const CSS: &str = r#"
:root{--ink:#1d1d1f;--muted:#5b5b60;--line:#d9d9de;--bg:#fff;--soft:#f5f6f8;--read:#e8f1fa;--write:#fbeee6}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1100px;padding:24px 28px 48px;font-family:'DejaVu Sans','Bitstream Vera Sans',Verdana,system-ui,-apple-system,'Segoe UI',Arial,sans-serif;color:var(--ink);background:var(--bg);line-height:1.45;font-size:15px}
h1{font-size:1.65em;margin:0 0 .4em}
h2{font-size:1.25em;margin:1.8em 0 .6em;padding-bottom:.25em;border-bottom:2px solid var(--line)}
p{max-width:75ch}
.dl-warn{border-left:4px solid #d55e00;background:#fdf0e8;padding:.5em .8em}
.dl-meta{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1.2em;margin:0 0 1em;font-size:.9em;color:var(--muted)}
.dl-meta dt{font-weight:bold}.dl-meta dd{margin:0}
.dl-toggles{position:sticky;top:0;z-index:2;display:flex;flex-wrap:wrap;gap:6px;align-items:center;padding:8px 0;background:var(--bg);border-bottom:1px solid var(--line)}
.dl-toggles[hidden]{display:none}
.dl-toggles-label{font-size:.85em;color:var(--muted);margin-right:4px}
.dl-toggles button{font:inherit;font-size:.85em;padding:3px 10px;border:1px solid #aaa;border-radius:14px;background:#fff;cursor:pointer;display:inline-flex;align-items:center;gap:6px}
.dl-toggles button:hover{background:var(--soft)}
.dl-toggles button[aria-pressed=false]{opacity:.5;text-decoration:line-through}
.dl-sw{display:inline-block;width:12px;height:12px;border-radius:2px}
.dl-figure{margin:1em 0 1.6em;break-inside:avoid}
.dl-figure svg{display:block;max-width:100%;height:auto}
.dl-table-wrap{overflow-x:auto}
table{border-collapse:collapse;margin:.8em 0 1.4em;font-size:.9em}
caption{text-align:left;font-weight:bold;padding:0 0 .4em}
.dl-table th,.dl-table td{padding:4px 10px;border-bottom:1px solid var(--line);text-align:left}
.dl-table th{background:var(--soft)}
.num{text-align:right!important;font-variant-numeric:tabular-nums}
.dl-unit{font-weight:normal;color:var(--muted);font-size:.85em}
.dl-tiles-wrap{display:inline-block;vertical-align:top;margin:0 24px 0 0}
.dl-tiles{border-spacing:4px;border-collapse:separate}
.dl-tiles thead th{font-size:1em;padding:2px 8px}
.dl-tiles .dl-test{text-align:left;padding:8px 12px;background:#3d4a5c;color:#fff;border-radius:4px;white-space:nowrap}
.dl-tile{min-width:11.5em;padding:6px 12px;border-radius:4px;text-align:right;font-variant-numeric:tabular-nums}
.dl-read{background:var(--read)}.dl-write{background:var(--write)}
.dl-big{font-size:1.55em;font-weight:bold}
.dl-small{font-size:.8em;color:var(--muted)}
@media print{body{max-width:none;padding:0;font-size:11pt}.dl-toggles{display:none}h2{break-after:avoid}.dl-figure,table{break-inside:avoid}}
"#;

/// Per-group rules: hiding group N removes its data, marks and blocks and dims its legend entries.
pub fn group_css(groups: usize) -> String {
    let mut s = String::new();
    for i in 0..groups {
        s.push_str(&format!(
            ".dl-hide-{i} .dl-data.dl-g{i},.dl-hide-{i} .dl-mark.dl-g{i},.dl-hide-{i} .dl-label.dl-g{i},.dl-hide-{i} .dl-block.dl-g{i}{{display:none}}.dl-hide-{i} .dl-leg.dl-g{i}{{opacity:.25}}\n"
        ));
    }
    s
}
