//! Drawing a report costs memory several times its run.json (a 50 MB bundle: seconds of
//! CPU and 300+ MB), so the server bounds it two ways:
//!
//! - a run's rendered page is cached, keyed by the run's id and its stored run.json's
//!   SHA-256 (the content it shows), in a cache bounded by the bytes of the pages it
//!   holds; readers of one run that is being drawn wait for that one drawing
//!   (quick_cache's placeholder) instead of each drawing it again;
//! - every drawing (a run's page, its report download, a comparison) first takes permits
//!   of a semaphore counted in MiB of the run.json it will read, so that the documents
//!   being drawn at once never add up past the budget; a document larger than the whole
//!   budget is drawn alone.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Bytes;
use axum::http::StatusCode;
use quick_cache::sync::Cache;
use quick_cache::{OptionsBuilder, Weighter};
use tokio::sync::{Semaphore, SemaphorePermit};

use crate::failure::Failure;

/// Pages cached by default: their bytes.
pub const DEFAULT_CACHE_BYTES: u64 = 128 << 20;

/// run.json bytes drawn at once by default.
pub const DEFAULT_RENDER_BUDGET_BYTES: u64 = 64 << 20;

/// Assumed size of a run.json whose size the database did not record (runs stored
/// before schema version 4 record it when the migration runs, so rarely used).
const UNKNOWN_BUNDLE_BYTES: u64 = 16 << 20;

/// What a cached page shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum View {
    /// The run's page on the server.
    Page,
    /// The standalone report download.
    Report,
}

/// A cached page: the run, the content of its run.json, and the view.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    pub run_id: String,
    /// None for runs stored before their hash was: a stored run is never rewritten, so
    /// its id then names its content.
    pub sha256: Option<String>,
    pub view: View,
}

#[derive(Clone)]
struct PageBytes;

impl Weighter<Key, Bytes> for PageBytes {
    fn weight(&self, key: &Key, page: &Bytes) -> u64 {
        (page.len() + key.run_id.len() + 64) as u64
    }
}

/// Whether a page came from the cache or was drawn for this request (the
/// `X-Drivelab-Render` header: `cached` or `drawn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Cached,
    Drawn,
}

impl Source {
    pub fn header_value(self) -> &'static str {
        match self {
            Source::Cached => "cached",
            Source::Drawn => "drawn",
        }
    }
}

/// The cache, the drawing budget, and a count of drawings.
pub struct Renders {
    cache: Cache<Key, Bytes, PageBytes>,
    budget: Semaphore,
    budget_mib: u32,
    drawn: AtomicU64,
}

fn mib(bytes: u64) -> u64 {
    bytes.div_ceil(1 << 20)
}

impl Renders {
    pub fn new(cache_bytes: u64, render_budget_bytes: u64) -> Renders {
        let budget_mib = u32::try_from(mib(render_budget_bytes).max(1)).unwrap_or(u32::MAX);
        // One shard: a page may weigh a large part of the whole capacity (shards would
        // each hold a fraction of it), and pages are drawn seconds apart, not millions.
        let options = OptionsBuilder::new()
            .estimated_items_capacity(64)
            .weight_capacity(cache_bytes)
            .shards(1)
            .build()
            .expect("the cache's options are valid");
        Renders {
            cache: Cache::with_options(options, PageBytes, Default::default(), Default::default()),
            budget: Semaphore::new(budget_mib as usize),
            budget_mib,
            drawn: AtomicU64::new(0),
        }
    }

    /// Waits until documents of `bundle_bytes` in all may be drawn now (all of the
    /// budget for a document larger than it); drawing may start while the permit lives.
    pub async fn permit(&self, bundle_bytes: Option<u64>) -> Result<SemaphorePermit<'_>, Failure> {
        let want =
            mib(bundle_bytes.unwrap_or(UNKNOWN_BUNDLE_BYTES)).clamp(1, self.budget_mib.into());
        self.budget
            .acquire_many(want as u32)
            .await
            .map_err(|_| Failure::new(StatusCode::SERVICE_UNAVAILABLE, "the server is stopping"))
    }

    /// The page for `key`: from the cache, or drawn by `draw` (within the budget for a
    /// document of `bundle_bytes`) and cached. Parallel requests for one key wait for one
    /// drawing; when it fails, the next of them draws.
    pub async fn page<F, Fut>(
        &self,
        key: Key,
        bundle_bytes: Option<u64>,
        draw: F,
    ) -> Result<(Bytes, Source), Failure>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<String, Failure>>,
    {
        let guard = match self.cache.get_value_or_guard_async(&key).await {
            Ok(page) => return Ok((page, Source::Cached)),
            Err(guard) => guard,
        };
        let _permit = self.permit(bundle_bytes).await?;
        let page = Bytes::from(draw().await?);
        self.drawn.fetch_add(1, Ordering::Relaxed);
        // Too heavy for the cache: the waiting readers still get it, later ones draw.
        let _ = guard.insert(page.clone());
        Ok((page, Source::Drawn))
    }

    /// How many pages were drawn since the server started.
    pub fn drawn(&self) -> u64 {
        self.drawn.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn key(id: &str) -> Key {
        Key {
            run_id: id.into(),
            sha256: Some("ab".into()),
            view: View::Page,
        }
    }

    #[test]
    fn parallel_readers_of_one_page_wait_for_one_drawing() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let renders = Arc::new(Renders::new(1 << 20, 4 << 20));
        let gate = Arc::new(tokio::sync::Notify::new());
        let sources = rt.block_on(async {
            let mut tasks = Vec::new();
            for _ in 0..16 {
                let (r, g) = (renders.clone(), gate.clone());
                tasks.push(tokio::spawn(async move {
                    r.page(key("a"), Some(1 << 20), || async move {
                        // Drawing waits until every reader has asked (the others are
                        // parked on the placeholder by then, or find the page after).
                        g.notified().await;
                        Ok("<p>a</p>".to_string())
                    })
                    .await
                    .map(|(_, s)| s)
                }));
            }
            tokio::task::yield_now().await;
            gate.notify_one();
            let mut out = Vec::new();
            for t in tasks {
                out.push(t.await.unwrap().unwrap());
            }
            out
        });
        assert_eq!(renders.drawn(), 1);
        assert_eq!(sources.iter().filter(|s| **s == Source::Drawn).count(), 1);
    }

    #[test]
    fn another_content_is_another_page_and_the_cache_is_bounded() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let renders = Renders::new(4000, 1 << 20);
        let draw = |s: &'static str| move || async move { Ok::<_, Failure>(s.repeat(1000)) };
        rt.block_on(async {
            let (_, s) = renders.page(key("a"), None, draw("a")).await.unwrap();
            assert_eq!(s, Source::Drawn);
            let (p, s) = renders.page(key("a"), None, draw("x")).await.unwrap();
            assert_eq!((s, &p[..3]), (Source::Cached, &b"aaa"[..]));
            let mut k = key("a");
            k.sha256 = Some("cd".into());
            let (p, s) = renders.page(k, None, draw("b")).await.unwrap();
            assert_eq!((s, &p[..3]), (Source::Drawn, &b"bbb"[..]));
            // Pages of 1000 bytes in a cache of 4000: the oldest are dropped.
            for id in ["c", "d", "e", "f", "g"] {
                renders.page(key(id), None, draw("c")).await.unwrap();
            }
            assert!(renders.cache.weight() <= 4000, "{}", renders.cache.weight());
        });
    }
}
