//! What makes a controller reconcile an object: its own kind's changes, mapped changes of other
//! kinds, references from any stream and "everything again" signals, merged into one stream of
//! requests over the controller's store. The builder reads like kube-runtime's `Controller`
//! (`for_stream`, `watches_stream`, `reconcile_on`, `reconcile_all_on`), which it replaces so that
//! [`super::run`] owns the merged stream and can put its queue in front of kube's scheduler
//! ([`super::queue`]).
//!
//! Every request names its object by namespace and name only, without kube's `extra`
//! (resourceVersion and uid), and carries no copy of the object that caused it: kube-runtime's
//! scheduler keeps a queued request's reference twice, a related object's reference (with its
//! five type strings) besides, and nothing reads either.
//!
//! There is no backoff on the merged stream, unlike kube-runtime's `Controller` (whose trigger
//! backoff lets one failing watch stall every other trigger of the controller for the whole
//! delay, compounding with each watch's own backoff: after a 4 s garden outage the fault suite saw
//! catch-up take up to 25 s). Every trigger here is a watch with its own
//! [`crate::watch::watch_backoff`], which is where backing off belongs.

use futures::stream::{self, BoxStream, SelectAll};
use futures::{Stream, StreamExt as _, TryStreamExt as _};
use kube::Resource;
use kube::runtime::controller::{ReconcileReason, ReconcileRequest};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;

/// The request stream of one controller.
pub(crate) type RequestStream<K> =
    SelectAll<BoxStream<'static, Result<ReconcileRequest<K>, watcher::Error>>>;

/// The triggers of a controller over kind `K`, with the store its reconciles read objects from.
pub struct Triggers<K: Resource<DynamicType = ()> + 'static> {
    store: Store<K>,
    requests: RequestStream<K>,
}

impl<K> Triggers<K>
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    /// Reconciles every object `trigger` yields (a watch's applied objects, usually through a
    /// change filter), reading it from `store` when its turn comes.
    pub fn for_stream(
        trigger: impl Stream<Item = Result<K, watcher::Error>> + Send + 'static,
        store: Store<K>,
    ) -> Self {
        let mut requests = SelectAll::new();
        requests.push(
            trigger
                .map_ok(|object| request(object_ref(&object), ReconcileReason::ObjectUpdated))
                .boxed(),
        );
        Self { store, requests }
    }

    /// Also reconciles the objects `mapper` names for every object of another kind that `trigger`
    /// yields.
    #[must_use]
    pub fn watches_stream<Other, I>(
        mut self,
        trigger: impl Stream<Item = Result<Other, watcher::Error>> + Send + 'static,
        mapper: impl Fn(Other) -> I + Send + Sync + 'static,
    ) -> Self
    where
        Other: Send + 'static,
        I: IntoIterator<Item = ObjectRef<K>> + 'static,
        I::IntoIter: Send,
    {
        self.requests.push(
            trigger
                .map_ok(move |other| {
                    stream::iter(mapper(other).into_iter().map(|reference| {
                        // kube's `RelatedObjectUpdated` would keep the other object's reference.
                        Ok(request(without_extra(reference), ReconcileReason::Unknown))
                    }))
                })
                .try_flatten()
                .boxed(),
        );
        self
    }

    /// Also reconciles every object `trigger` names.
    #[must_use]
    pub fn reconcile_on(
        mut self,
        trigger: impl Stream<Item = ObjectRef<K>> + Send + 'static,
    ) -> Self {
        self.requests.push(
            trigger
                .map(|reference| Ok(request(without_extra(reference), ReconcileReason::Unknown)))
                .boxed(),
        );
        self
    }

    /// Also reconciles every object of the store whenever `trigger` yields.
    #[must_use]
    pub fn reconcile_all_on(mut self, trigger: impl Stream<Item = ()> + Send + 'static) -> Self {
        let store = self.store.clone();
        self.requests.push(
            trigger
                .flat_map(move |()| {
                    stream::iter(store.state().into_iter().map(|object| {
                        Ok(request(
                            object_ref(object.as_ref()),
                            ReconcileReason::BulkReconcile,
                        ))
                    }))
                })
                .boxed(),
        );
        self
    }

    /// The store the controller's reconciles read their objects from.
    pub fn store(&self) -> Store<K> {
        self.store.clone()
    }

    pub(crate) fn into_parts(self) -> (Store<K>, RequestStream<K>) {
        (self.store, self.requests)
    }
}

fn request<K: Resource<DynamicType = ()>>(
    obj_ref: ObjectRef<K>,
    reason: ReconcileReason,
) -> ReconcileRequest<K> {
    ReconcileRequest { obj_ref, reason }
}

fn without_extra<K: Resource<DynamicType = ()>>(mut reference: ObjectRef<K>) -> ObjectRef<K> {
    reference.extra = Default::default();
    reference
}

/// The reference of `object` by namespace and name only, without kube's `extra`
/// (resourceVersion and uid), which nothing in a controller's queue reads.
pub fn object_ref<K: Resource<DynamicType = ()>>(object: &K) -> ObjectRef<K> {
    let meta = object.meta();
    reference(
        meta.namespace.as_deref(),
        meta.name.as_deref().unwrap_or_default(),
    )
}

/// The reference to `name` in `namespace` (`None`: cluster-scoped), without `extra`.
pub(crate) fn reference<K: Resource<DynamicType = ()>>(
    namespace: Option<&str>,
    name: &str,
) -> ObjectRef<K> {
    let reference = ObjectRef::new(name);
    match namespace {
        Some(namespace) => reference.within(namespace),
        None => reference,
    }
}
