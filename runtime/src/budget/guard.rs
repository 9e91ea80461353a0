//! The write budget as part of a client: [`guarded`] wraps a [`kube::Client`] so that every
//! write it sends — update, patch, apply, delete, on an object or its subresources — is charged
//! to the budget of the controller whose reconcile sends it, whichever code path builds the
//! request. A write over the budget is not sent; the caller gets the 429 of [`super::admit`].
//!
//! Creates (POST) are not charged: the object's name is in the body, and creating one object
//! again answers 409 AlreadyExists, so a create cannot flip-flop an object. Reads and watches
//! pass untouched.
//!
//! The charge happens when the request's future is first polled, in the caller's task: kube's
//! client hands each request to a buffer worker that only builds the future, so the task-local
//! controller scope ([`super::scoped`]) is still the caller's. A client wrapped twice charges a
//! write once: the outer guard marks the request and inner guards let marked requests pass.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use http::{Method, Request, Response};
use kube::client::{Body, ClientBuilder};
use tower::{BoxError, Layer, Service};

/// Wraps `client` so that its writes go through the write budget (see the module docs).
pub fn guarded(client: kube::Client) -> kube::Client {
    static NEXT_CLIENT: AtomicU64 = AtomicU64::new(1);
    let namespace = client.default_namespace().to_owned();
    let valid_until = *client.valid_until();
    let inner = ClientService(client);
    let layer = WriteBudgetLayer {
        client: NEXT_CLIENT.fetch_add(1, Ordering::Relaxed),
    };
    ClientBuilder::new(inner, namespace)
        .with_layer(&layer)
        .with_valid_until(valid_until)
        .build()
}

/// The budget key of a write request, `None` for requests that are not charged.
///
/// Writes to an object's subresources (`/status`, `/scale`, `/finalize`) share the object's
/// bucket: two writers fighting over a Seed fight whether they write its status or its metadata.
fn write_key(method: &Method, path: &str) -> Option<String> {
    if !matches!(*method, Method::PUT | Method::PATCH | Method::DELETE) {
        return None;
    }
    let object = ["/status", "/scale", "/finalize"]
        .iter()
        .find_map(|subresource| path.strip_suffix(subresource))
        .unwrap_or(path);
    Some(object.to_owned())
}

/// Marks a request whose write was charged by an outer guard.
#[derive(Debug, Clone, Copy)]
struct Charged;

/// The tower layer of [`guarded`]; `client` keeps the buckets of one wrapped client apart from
/// another's (two clusters can hold objects of the same path).
#[derive(Debug, Clone, Copy)]
struct WriteBudgetLayer {
    client: u64,
}

impl<S> Layer<S> for WriteBudgetLayer {
    type Service = WriteBudget<S>;

    fn layer(&self, inner: S) -> Self::Service {
        WriteBudget {
            inner,
            client: self.client,
        }
    }
}

/// Charges writes before passing them to `inner`.
#[derive(Debug, Clone)]
struct WriteBudget<S> {
    inner: S,
    client: u64,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S, B> Service<Request<Body>> for WriteBudget<S>
where
    S: Service<Request<Body>, Response = Response<B>>,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
{
    type Response = Response<B>;
    type Error = BoxError;
    type Future = BoxFuture<Result<Response<B>, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut request: Request<Body>) -> Self::Future {
        let key = if request.extensions().get::<Charged>().is_some() {
            None
        } else {
            write_key(request.method(), request.uri().path())
        };
        if key.is_some() {
            request.extensions_mut().insert(Charged);
        }
        let response = self.inner.call(request);
        let client = self.client;
        Box::pin(async move {
            if let Some(key) = key {
                super::admit_through(client, &key)
                    .map_err(|refused| Box::new(refused) as BoxError)?;
            }
            response.await.map_err(Into::into)
        })
    }
}

/// A [`kube::Client`] as a tower service, so that it can be wrapped in further layers.
#[derive(Clone)]
struct ClientService(kube::Client);

impl Service<Request<Body>> for ClientService {
    type Response = Response<Body>;
    type Error = kube::Error;
    type Future = BoxFuture<Result<Response<Body>, kube::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), kube::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let client = self.0.clone();
        Box::pin(async move { client.send(request).await })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_keyed_by_object_and_everything_else_passes() {
        let object = "/apis/core.gardener.cloud/v1beta1/seeds/my-seed";
        let cases = [
            (Method::PATCH, object, Some(object)),
            (Method::PUT, object, Some(object)),
            (Method::DELETE, object, Some(object)),
            (
                Method::PATCH,
                &format!("{object}/status") as &str,
                Some(object),
            ),
            (
                Method::PUT,
                "/apis/apps/v1/namespaces/a/deployments/d/scale",
                Some("/apis/apps/v1/namespaces/a/deployments/d"),
            ),
            (
                Method::PUT,
                "/api/v1/namespaces/x/finalize",
                Some("/api/v1/namespaces/x"),
            ),
            (Method::GET, object, None),
            (Method::POST, "/api/v1/namespaces/a/configmaps", None),
        ];
        for (method, path, expected) in cases {
            assert_eq!(
                write_key(&method, path).as_deref(),
                expected,
                "{method} {path}"
            );
        }
    }
}
