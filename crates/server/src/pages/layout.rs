//! The frame around the server's own pages, and how a report page gets the server's
//! navigation.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::{html, Markup, PreEscaped, DOCTYPE};

/// What the server's own pages may load: nothing from elsewhere; inline style and the
/// small sorting script only; forms submit to the server itself.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

const CSS: &str = "body{font-family:system-ui,sans-serif;margin:0;color:#222}\
nav.dl-nav{background:#1d3557;padding:.5em 1em}nav.dl-nav a{color:#fff;margin-right:1.5em;text-decoration:none;font-weight:600}\
main.dl-server{padding:1em}table.dl-list{border-collapse:collapse;font-size:.9em}\
table.dl-list th,table.dl-list td{border-bottom:1px solid #ddd;padding:.25em .5em;text-align:left}\
table.dl-list td.num{text-align:right;font-variant-numeric:tabular-nums}\
form.dl-filter input,form.dl-filter select{margin:0 .5em .5em 0}\
.dl-error{color:#a00}.dl-server-head{padding:.5em 1em;background:#f4f6fa;border-bottom:1px solid #ccd}\
.dl-server-head code{background:#fff;padding:.1em .3em}\
#dl-identity{display:grid;grid-template-columns:max-content 1fr;gap:.1em 1em}\
#dl-identity dt{font-weight:600}#dl-identity dd{margin:0;overflow-wrap:anywhere}\
table.dl-knobs td{font-family:monospace;overflow-wrap:anywhere}";

/// The navigation bar of every page.
pub fn nav() -> Markup {
    html! {
        nav.dl-nav {
            a href="/" { "drivelab results" }
            a href="/runs" { "Runs" }
        }
    }
}

/// An HTML response with the server's headers.
pub fn html_response(status: StatusCode, body: impl IntoResponse) -> Response {
    let mut r = (status, body).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// A whole page of the server's own.
pub fn page(title: &str, body: Markup) -> Response {
    html_response(StatusCode::OK, page_html(title, body))
}

/// The HTML of a whole page of the server's own.
pub fn page_html(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " – drivelab" }
                style { (PreEscaped(CSS)) }
            }
            body {
                (nav())
                main.dl-server { (body) }
            }
        }
    }
    .into_string()
}

/// The page of a failed request.
pub fn error_page(status: StatusCode, message: &str) -> Response {
    let mut r = page(
        status.canonical_reason().unwrap_or("error"),
        html! {
            h1 { (status.as_u16()) " " (status.canonical_reason().unwrap_or("")) }
            p.dl-error { (message) }
        },
    );
    *r.status_mut() = status;
    r
}

/// A rendered report (a whole HTML document of the report crate) with the server's
/// navigation and `head` (run identity, downloads) at the top of its body.
pub fn report_with_head(report_html: String, head: Markup) -> Response {
    html_response(StatusCode::OK, report_with_head_html(report_html, head))
}

/// The HTML of [`report_with_head`].
pub fn report_with_head_html(report_html: String, head: Markup) -> String {
    let top = html! {
        style { (PreEscaped(CSS)) }
        (nav())
        div.dl-server-head { (head) }
    }
    .into_string();
    match report_html.find("<body>") {
        Some(i) => {
            let at = i + "<body>".len();
            format!("{}{top}{}", &report_html[..at], &report_html[at..])
        }
        None => format!("{top}{report_html}"),
    }
}
