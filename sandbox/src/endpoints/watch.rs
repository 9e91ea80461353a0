//! `watch`: replay from a resourceVersion (or the current state), then live events, with selector
//! enter/exit turned into ADDED/DELETED, bookmarks, timeouts and 410 Gone for compacted versions.
//!
//! Live events come from the store's channel for the watched resource and namespace, so a write
//! wakes only the watches of its resource (in its namespace or in all).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http::{Response, header};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio::time::Instant;

use super::read::Selectors;
use super::table::{self, TableRequest};
use super::{Api, Body, Call};
use crate::resources::ResourceType;
use crate::status::ApiError;
use crate::storage::{Event, EventType};

/// Default watch duration when the client gives no `timeoutSeconds` (kube picks 30-60 minutes).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);
/// How often a bookmark is sent to clients that allow them.
const BOOKMARK_INTERVAL: Duration = Duration::from_secs(5);

/// What a watcher wants to see.
struct Filter {
    key: String,
    namespace: String,
    selectors: Selectors,
    metadata_only: bool,
    /// A Table per event (with column definitions on the first one only), for the type.
    table: Option<(TableRequest, Arc<ResourceType>)>,
    headers_sent: AtomicBool,
}

impl Filter {
    fn matches(&self, object: &Value) -> bool {
        let namespace_ok = self.namespace.is_empty()
            || object
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                == Some(self.namespace.as_str());
        namespace_ok && self.selectors.matches(object)
    }

    /// The event a watcher sees for a stored event, if any: the stored object itself (shared, not
    /// copied), or the previous state when the object left the selection.
    fn translate(&self, event: &Event) -> Option<(EventType, Arc<Value>)> {
        if event.resource != self.key {
            return None;
        }
        let now = self.matches(&event.object);
        match event.kind {
            EventType::Added => now.then(|| (EventType::Added, event.object.clone())),
            EventType::Deleted => now.then(|| (EventType::Deleted, event.object.clone())),
            EventType::Modified => {
                let before = event.previous.as_ref().is_some_and(|p| self.matches(p));
                match (before, now) {
                    (true, true) => Some((EventType::Modified, event.object.clone())),
                    (false, true) => Some((EventType::Added, event.object.clone())),
                    (true, false) => {
                        // Leaving the selection: the previous state, at the event's resourceVersion.
                        let mut previous =
                            event.previous.as_deref().cloned().unwrap_or(Value::Null);
                        if let Some(metadata) =
                            previous.get_mut("metadata").and_then(Value::as_object_mut)
                        {
                            metadata.insert("resourceVersion".into(), json!(event.rv.to_string()));
                        }
                        Some((EventType::Deleted, Arc::new(previous)))
                    }
                    (false, false) => None,
                }
            }
        }
    }

    fn line(&self, kind: &str, object: &Value) -> Bytes {
        /// One line of the stream, serialized from the borrowed object.
        #[derive(serde::Serialize)]
        struct Line<'a> {
            #[serde(rename = "type")]
            kind: &'a str,
            object: &'a Value,
        }
        let converted = if let Some((request, rt)) = self
            .table
            .as_ref()
            .filter(|_| kind != "ERROR" && kind != "BOOKMARK")
        {
            let headers = !self.headers_sent.swap(true, Ordering::Relaxed);
            let mut metadata = serde_json::Map::new();
            if let Some(rv) = object.pointer("/metadata/resourceVersion") {
                metadata.insert("resourceVersion".into(), rv.clone());
            }
            Some(table::table(rt, *request, [object], metadata, headers))
        } else if self.metadata_only {
            Some(
                json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": object.get("metadata").cloned().unwrap_or(Value::Null)}),
            )
        } else {
            None
        };
        let object = converted.as_ref().unwrap_or(object);
        let mut text = serde_json::to_vec(&Line { kind, object }).unwrap_or_default();
        text.push(b'\n');
        Bytes::from(text)
    }
}

/// Starts a watch.
pub fn watch(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    let filter = Filter {
        key: call.rt.storage_key(),
        namespace: call.path.namespace.clone(),
        selectors: Selectors::parse(call)?,
        metadata_only: call.metadata_only(),
        table: call.table()?.map(|request| (request, call.rt.clone())),
        headers_sent: AtomicBool::new(false),
    };
    let timeout = call
        .query
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_TIMEOUT);
    let bookmarks = crate::endpoints::request::flag(call.query, "allowWatchBookmarks");
    let send_initial = crate::endpoints::request::flag(call.query, "sendInitialEvents");
    let requested = call
        .query
        .get("resourceVersion")
        .cloned()
        .unwrap_or_default();
    let requested_rv: Option<u64> = match requested.as_str() {
        "" | "0" => None,
        text => Some(
            text.parse()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {text}")))?,
        ),
    };
    let bookmark_kind = (call.rt.api_version(), call.rt.kind.clone());

    let mut initial: Vec<Bytes> = Vec::new();
    let (receiver, current_rv) = {
        let mut state = call.api.store.lock();
        let receiver = state.subscribe_watch(&filter.key, &filter.namespace);
        let current = state.resource_version();
        match requested_rv {
            Some(rv) if !send_initial => match state.events_since(&filter.key, rv) {
                Ok(events) => {
                    for event in events {
                        if let Some((kind, object)) = filter.translate(&event) {
                            initial.push(filter.line(kind.as_str(), &object));
                        }
                    }
                }
                Err(oldest) => {
                    let status =
                        ApiError::gone(format!("too old resource version: {rv} ({oldest})")).body;
                    initial.push(filter.line("ERROR", &status));
                    return Ok(stream_response(initial, None));
                }
            },
            _ => {
                let namespace = (!filter.namespace.is_empty()).then_some(filter.namespace.as_str());
                for object in state.list(&filter.key, namespace) {
                    if filter.matches(&object) {
                        initial.push(filter.line("ADDED", &object));
                    }
                }
                if send_initial && bookmarks {
                    let bookmark = bookmark_object(&bookmark_kind, current, true);
                    initial.push(filter.line("BOOKMARK", &bookmark));
                }
            }
        }
        (receiver, current)
    };
    let live = Live {
        api: call.api.clone(),
        filter,
        receiver,
        deadline: Instant::now() + timeout,
        bookmarks,
        bookmark_kind,
        last_rv: current_rv,
        shutdown: call.api.shutdown.clone(),
        faults: call.api.faults.watch_drops(),
        _release: Release {
            api: call.api.clone(),
            key: call.rt.storage_key(),
            namespace: call.path.namespace.clone(),
        },
    };
    Ok(stream_response(initial, Some(live)))
}

fn bookmark_object(kind: &(String, String), rv: u64, initial_end: bool) -> Value {
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    json!({"kind": kind.1, "apiVersion": kind.0, "metadata": metadata})
}

/// The live part of a watch.
struct Live {
    api: Arc<Api>,
    filter: Filter,
    receiver: broadcast::Receiver<Arc<Event>>,
    deadline: Instant,
    bookmarks: bool,
    bookmark_kind: (String, String),
    last_rv: u64,
    shutdown: tokio_util::sync::CancellationToken,
    faults: tokio::sync::watch::Receiver<u64>,
    /// Declared after `receiver`, so it is dropped after it.
    _release: Release,
}

/// Drops the store's channel of a watch when its last watch ends: the channel's buffer is
/// allocated up front and holds the last events it carried (and through them old objects), so
/// a channel kept until the next watch of any resource held memory per closed watch.
struct Release {
    api: Arc<Api>,
    key: String,
    namespace: String,
}

impl Drop for Release {
    fn drop(&mut self) {
        self.api
            .store
            .lock()
            .release_watch(&self.key, &self.namespace);
    }
}

impl Live {
    /// The next line to send, or `None` when the watch ends.
    async fn next_line(&mut self) -> Option<Bytes> {
        loop {
            let bookmark_at = Instant::now() + BOOKMARK_INTERVAL;
            tokio::select! {
                received = self.receiver.recv() => match received {
                    Ok(event) => {
                        self.last_rv = event.rv;
                        if let Some((kind, object)) = self.filter.translate(&event) {
                            return Some(self.filter.line(kind.as_str(), &object));
                        }
                    }
                    // Too slow or the store is gone: end the watch; the client re-watches from its last version.
                    Err(_) => return None,
                },
                _ = tokio::time::sleep_until(bookmark_at), if self.bookmarks => {
                    if let Some(rv) = self.caught_up_to() {
                        self.last_rv = rv;
                    }
                    let bookmark = bookmark_object(&self.bookmark_kind, self.last_rv, false);
                    return Some(self.filter.line("BOOKMARK", &bookmark));
                }
                _ = tokio::time::sleep_until(self.deadline) => return None,
                _ = self.shutdown.cancelled() => return None,
                _ = self.faults.changed() => return None,
            }
        }
    }
}

impl Live {
    /// The store's current resourceVersion when this watch has sent every event up to it, i.e. when
    /// nothing is queued for it: events are sent under the store lock, so none up to the version
    /// read under that lock can still be on its way. Bookmarks then carry the latest version even
    /// when writes went only to other resources.
    fn caught_up_to(&self) -> Option<u64> {
        let state = self.api.store.lock();
        self.receiver.is_empty().then(|| state.resource_version())
    }
}

fn stream_response(initial: Vec<Bytes>, live: Option<Live>) -> Response<Body> {
    let head = futures::stream::iter(
        initial
            .into_iter()
            .map(|b| Ok::<_, std::io::Error>(Frame::data(b))),
    );
    let tail = futures::stream::unfold(live, |live| async move {
        let mut live = live?;
        let line = live.next_line().await?;
        Some((Ok(Frame::data(line)), Some(live)))
    });
    let body = BodyExt::boxed(StreamBody::new(head.chain(tail)));
    let mut response = Response::new(body);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-cache, private"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selectors::{FieldSelector, LabelSelector};

    fn filter(labels: &str) -> Filter {
        Filter {
            key: "configmaps".into(),
            namespace: "ns".into(),
            selectors: Selectors {
                labels: LabelSelector::parse(labels).expect("valid"),
                fields: FieldSelector::default(),
            },
            metadata_only: false,
            table: None,
            headers_sent: AtomicBool::new(false),
        }
    }

    fn cm(live: &str) -> Arc<Value> {
        Arc::new(
            json!({"metadata": {"name": "a", "namespace": "ns", "labels": {"live": live}, "resourceVersion": "1"}}),
        )
    }

    fn modified(before: &str, after: &str) -> Event {
        Event {
            rv: 9,
            resource: "configmaps".into(),
            kind: EventType::Modified,
            object: cm(after),
            previous: Some(cm(before)),
        }
    }

    #[test]
    fn leaving_the_selector_is_a_deletion_of_the_previous_state() {
        let (kind, object) = filter("live=yes")
            .translate(&modified("yes", "no"))
            .expect("visible");
        assert_eq!(kind, EventType::Deleted);
        assert_eq!(object["metadata"]["labels"]["live"], "yes");
        assert_eq!(object["metadata"]["resourceVersion"], "9");
    }

    #[test]
    fn entering_the_selector_is_an_addition() {
        let (kind, _) = filter("live=yes")
            .translate(&modified("no", "yes"))
            .expect("visible");
        assert_eq!(kind, EventType::Added);
        assert!(
            filter("live=yes")
                .translate(&modified("no", "no"))
                .is_none()
        );
    }

    #[test]
    fn other_resources_are_not_seen() {
        let mut event = modified("yes", "yes");
        event.resource = "secrets".into();
        assert!(filter("").translate(&event).is_none());
    }
}
