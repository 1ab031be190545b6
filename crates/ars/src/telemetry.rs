//! Logs and traces. Logs always go to stderr; spans are exported over OTLP/HTTP when the
//! standard OpenTelemetry variables name an endpoint, and only for `ars serve`.
//!
//! **Boundary:** the only module that knows OpenTelemetry. The libraries emit plain `tracing`
//! spans (`request`, `run`, `model_call`, `tool_call`); the layer installed here turns ARS's
//! own spans into OTel spans. Without an endpoint no OTel layer exists at all.

use anyhow::Context;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::config::{Config, LogFormat};

/// The service name when `OTEL_SERVICE_NAME` says none.
const DEFAULT_SERVICE_NAME: &str = "ars";

/// What [`init`] started; [`Telemetry::shutdown`] exports what is still buffered.
pub struct Telemetry {
    /// Set only when spans are exported.
    provider: Option<SdkTracerProvider>,
}

impl Telemetry {
    /// Exports the spans still buffered and stops the exporter. Waits on a blocking thread:
    /// the batch processor exports from a thread of its own and shutdown joins it.
    pub async fn shutdown(self) {
        let Some(provider) = self.provider else {
            return;
        };
        match tokio::task::spawn_blocking(move || provider.shutdown()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "cannot export the last spans"),
            Err(e) => tracing::warn!(error = %e, "cannot stop the span exporter"),
        }
    }
}

/// Structured logs to stderr; `RUST_LOG` overrides the default filter, which is `warn` when
/// `quiet`. With `export` and an OTLP endpoint in the environment, ARS's spans (info and
/// above, whatever `RUST_LOG` says) are exported as well.
pub fn init(config: &Config, quiet: bool, export: bool) -> anyhow::Result<Telemetry> {
    let default = if quiet {
        "warn"
    } else {
        "info,sqlx=warn,tower_http=info"
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let fmt = tracing_subscriber::fmt::layer()
        .with_ansi(ansi)
        .with_writer(std::io::stderr);
    let logs = match config.log_format {
        LogFormat::Json => fmt.json().with_filter(filter).boxed(),
        LogFormat::Pretty => fmt.with_filter(filter).boxed(),
    };
    let otlp = if export {
        Otlp::from_env(|name| std::env::var(name).ok())?
    } else {
        None
    };
    let provider = otlp.as_ref().map(Otlp::provider).transpose()?;
    // Only ARS's own spans, info and above: the exporter's HTTP stack traces too, and
    // exporting its spans would feed the exporter with its own work. Targets match by prefix,
    // so `ars` is every ARS crate (`ars_api`, `ars_runtime`, …); a static filter keeps other
    // crates' callsites off for this layer for good.
    let traces = provider.as_ref().map(|p| {
        tracing_opentelemetry::layer()
            .with_tracer(p.tracer("ars"))
            // An OS thread's id beside a run's `thread_id` would only confuse.
            .with_threads(false)
            .with_filter(Targets::new().with_target("ars", tracing::Level::INFO))
    });
    tracing_subscriber::registry()
        .with(logs)
        .with(traces)
        .init();
    if let Some(otlp) = &otlp {
        tracing::info!(
            encoding = ?otlp.encoding,
            service = otlp.service_name.as_deref().unwrap_or("(OTEL_RESOURCE_ATTRIBUTES)"),
            "exporting traces over OTLP/HTTP"
        );
    }
    Ok(Telemetry { provider })
}

/// The encodings of OTLP/HTTP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Encoding {
    Protobuf,
    Json,
}

/// How spans are exported, read from the standard variables. The exporter itself reads the
/// endpoint (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as is, else `OTEL_EXPORTER_OTLP_ENDPOINT`
/// + `/v1/traces`) and the headers (`OTEL_EXPORTER_OTLP_[TRACES_]HEADERS`).
#[derive(Debug, PartialEq, Eq)]
struct Otlp {
    encoding: Encoding,
    /// `None` when `OTEL_RESOURCE_ATTRIBUTES` names the service, which the SDK reads itself.
    service_name: Option<String>,
}

impl Otlp {
    /// `None` unless an endpoint is set (and `OTEL_SDK_DISABLED` is not `true`). A protocol
    /// other than OTLP/HTTP is refused rather than sent to an endpoint that would not
    /// understand it.
    fn from_env(var: impl Fn(&str) -> Option<String>) -> anyhow::Result<Option<Self>> {
        let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let endpoint = set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .or_else(|| set("OTEL_EXPORTER_OTLP_ENDPOINT"));
        let disabled = set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim() == "true");
        if endpoint.is_none() || disabled {
            return Ok(None);
        }
        let protocol = set("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| set("OTEL_EXPORTER_OTLP_PROTOCOL"));
        let encoding = match protocol.as_deref().map(str::trim) {
            None | Some("http/protobuf") => Encoding::Protobuf,
            Some("http/json") => Encoding::Json,
            Some(other) => anyhow::bail!(
                "OTLP protocol `{other}` is not supported: ars exports traces over \
                 http/protobuf or http/json"
            ),
        };
        let named_in_attributes = set("OTEL_RESOURCE_ATTRIBUTES").is_some_and(|attributes| {
            attributes.split(',').any(|kv| {
                kv.split_once('=')
                    .is_some_and(|(k, _)| k.trim() == "service.name")
            })
        });
        let service_name = match set("OTEL_SERVICE_NAME") {
            Some(name) => Some(name),
            None if named_in_attributes => None,
            None => Some(DEFAULT_SERVICE_NAME.to_string()),
        };
        Ok(Some(Self {
            encoding,
            service_name,
        }))
    }

    /// A tracer provider with a batch exporter: spans are queued as they end and sent from a
    /// background thread, so a slow collector never holds up a run.
    fn provider(&self) -> anyhow::Result<SdkTracerProvider> {
        let protocol = match self.encoding {
            Encoding::Protobuf => Protocol::HttpBinary,
            Encoding::Json => Protocol::HttpJson,
        };
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(protocol)
            .build()
            .context("cannot set up the OTLP trace exporter")?;
        let mut resource = Resource::builder();
        if let Some(name) = &self.service_name {
            resource = resource.with_service_name(name.clone());
        }
        let resource = resource.build();
        Ok(SdkTracerProvider::builder()
            .with_resource(resource)
            .with_batch_exporter(exporter)
            .build())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(vars: &[(&str, &str)]) -> anyhow::Result<Option<Otlp>> {
        Otlp::from_env(|name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn without_an_endpoint_nothing_is_exported() {
        assert_eq!(from(&[]).unwrap(), None);
        assert_eq!(from(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")]).unwrap(), None);
        assert_eq!(from(&[("OTEL_SERVICE_NAME", "x")]).unwrap(), None);
        let disabled = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_SDK_DISABLED", "true"),
        ];
        assert_eq!(from(&disabled).unwrap(), None);
    }

    #[test]
    fn either_endpoint_turns_export_on_with_protobuf_and_the_name_ars() {
        for var in [
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        ] {
            let otlp = from(&[(var, "http://127.0.0.1:4318")]).unwrap().unwrap();
            assert_eq!(otlp.encoding, Encoding::Protobuf);
            assert_eq!(otlp.service_name.as_deref(), Some("ars"));
        }
    }

    #[test]
    fn the_protocol_and_service_name_come_from_the_environment() {
        let otlp = from(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ("OTEL_SERVICE_NAME", "ars-eu-1"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(otlp.encoding, Encoding::Json);
        assert_eq!(otlp.service_name.as_deref(), Some("ars-eu-1"));
        // The traces-only variable wins over the general one.
        let otlp = from(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(otlp.encoding, Encoding::Protobuf);
    }

    #[test]
    fn a_service_name_in_the_resource_attributes_is_not_overridden() {
        let otlp = |attributes: &str| {
            from(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
                ("OTEL_RESOURCE_ATTRIBUTES", attributes),
            ])
            .unwrap()
            .unwrap()
        };
        assert_eq!(
            otlp("deployment.environment=eu, service.name=x").service_name,
            None
        );
        assert_eq!(
            otlp("deployment.environment=eu").service_name.as_deref(),
            Some("ars")
        );
    }

    #[test]
    fn grpc_is_refused_with_the_protocols_ars_speaks() {
        let err = from(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ])
        .unwrap_err();
        assert!(
            err.to_string().contains("http/protobuf or http/json"),
            "{err}"
        );
    }
}
