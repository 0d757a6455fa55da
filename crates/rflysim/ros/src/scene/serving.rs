//! How the scene node answers a service: each request on a task of its own,
//! so that one waiting for RflySim3D never holds up another.

use std::sync::Arc;

use futures::StreamExt;
use r2r::simulation_interfaces::msg::Result as SimResult;
use r2r::{Node, ServiceRequest, WrappedServiceTypeSupport};
use tokio::sync::watch;

use super::SceneCore;

pub(super) fn ok() -> SimResult {
    SimResult {
        result: SimResult::RESULT_OK as u8,
        error_message: String::new(),
    }
}

pub(super) fn failed(code: u8, message: impl Into<String>) -> SimResult {
    SimResult {
        result: code,
        error_message: message.into(),
    }
}

/// Serves `S` on `name`: each request answered by `answer` on a task of its own.
pub(super) fn serve_one<S, F, Fut>(
    node: &mut Node,
    name: &str,
    core: &Arc<SceneCore>,
    mut shutdown: watch::Receiver<bool>,
    answer: F,
) -> Result<(), String>
where
    S: WrappedServiceTypeSupport + 'static,
    S::Request: Send,
    S::Response: Send,
    F: Fn(Arc<SceneCore>, S::Request) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = S::Response> + Send + 'static,
{
    let mut requests = node
        .create_service::<S>(name, r2r::QosProfile::default())
        .map_err(|e| format!("scene: service {name}: {e}"))?;
    let core = core.clone();
    let answer = Arc::new(answer);
    tokio::spawn(async move {
        loop {
            let request: ServiceRequest<S> = tokio::select! {
                r = requests.next() => match r { Some(r) => r, None => return },
                _ = shutdown.changed() => return,
            };
            let (core, answer) = (core.clone(), answer.clone());
            tokio::spawn(async move {
                let ServiceRequest { message, .. } = &request;
                let response = answer(core, message.clone()).await;
                let _ = request.respond(response);
            });
        }
    });
    Ok(())
}
