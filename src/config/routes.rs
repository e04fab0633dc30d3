//! The outbox's routes as the configuration describes them: which main provider, whether SMTP
//! failover is configured, and the settings a route's pause blames (split from `config.rs` by
//! purpose).

use super::{Config, MainProvider};

impl Config {
    /// The outbox's routes as its policy sees them: the configured main provider, whether SMTP
    /// failover is configured, and the pauses on record (ms UTC).
    pub fn availability(
        &self,
        main_paused_until_ms: Option<i64>,
        smtp_paused_until_ms: Option<i64>,
    ) -> crate::domain::outbox::Availability {
        use crate::domain::outbox::{Availability, Provider};
        Availability {
            main: match self.main_provider {
                MainProvider::Cloudflare => Provider::Cloudflare,
                MainProvider::Resend { .. } => Provider::Resend,
            },
            main_paused_until_ms,
            smtp_configured: self.smtp.is_some(),
            smtp_paused_until_ms,
            owner_route: false,
            owner_route_paused_until_ms: None,
        }
    }

    /// The settings a pause of `provider`'s route blames, as `(variable, value)` pairs in a fixed
    /// order (`crate::domain::outbox::check_pause`): SMTP its host, port, TLS mode, user, password
    /// and our sender; Resend its key, base URL and our sender; Cloudflare Email Service our sender;
    /// the owner route the owner's address and our sender. Secrets are passed as they are and
    /// only ever hashed.
    pub fn route_settings(
        &self,
        provider: crate::domain::outbox::Provider,
    ) -> crate::domain::outbox::RouteSettings {
        use crate::domain::outbox::Provider;
        let sender = ("SENDER_EMAIL", self.branding.from.as_str().to_string());
        match provider {
            Provider::Cloudflare => vec![("MAIN_PROVIDER", "cloudflare".into()), sender],
            Provider::Resend => match &self.main_provider {
                MainProvider::Resend { api_key, base_url } => vec![
                    ("MAIN_PROVIDER", "resend".into()),
                    ("RESEND_API_KEY", api_key.clone()),
                    ("RESEND_BASE_URL", base_url.clone()),
                    sender,
                ],
                MainProvider::Cloudflare => vec![("MAIN_PROVIDER", "cloudflare".into()), sender],
            },
            Provider::Smtp => match &self.smtp {
                Some(smtp) => {
                    let (user, password) = smtp.credentials.clone().unwrap_or_default();
                    vec![
                        ("SMTP_HOST", smtp.host.clone()),
                        ("SMTP_PORT", smtp.port.to_string()),
                        ("SMTP_TLS", format!("{:?}", smtp.tls)),
                        ("SMTP_USERNAME", user),
                        ("SMTP_PASSWORD", password),
                        sender,
                    ]
                }
                None => vec![("SMTP_HOST", String::new()), sender],
            },
            Provider::OwnerRoute => vec![
                ("OWNER_EMAIL", self.owner_email.as_str().to_string()),
                sender,
            ],
        }
    }
}
