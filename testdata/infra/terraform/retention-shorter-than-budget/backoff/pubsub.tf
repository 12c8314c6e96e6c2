# Two Pub/Sub subscriptions whose retention outlasts requeueCount x
# requeueDelay + 1h, which the rule once judged enough, but not the
# retry policy's back-off that Pub/Sub adds after each hold
# (TestLintInfraRetentionCountsTheBackoff).

resource "google_pubsub_topic" "payments" {
  name    = "payments"
  project = "acme-prod"
}

resource "google_pubsub_topic" "payments_dlq" {
  name    = "payments-dlq"
  project = "acme-prod"
}

# validate: the declared retry policy is in force.
# 5 x 1m + 1h = 1h5m < 1h30m, but 5 x (1m + 10m) + 1h = 1h55m > 1h30m.
resource "google_pubsub_subscription" "payments" {
  name                       = "payments-sub"
  project                    = "acme-prod"
  topic                      = google_pubsub_topic.payments.id
  ack_deadline_seconds       = 60
  message_retention_duration = "5400s"

  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.payments_dlq.id
    max_delivery_attempts = 10
  }

  retry_policy {
    minimum_backoff = "60s"
    maximum_backoff = "600s"
  }
}

# create: the file's policy is in force (minimum requeueDelay, maximum
# gcp.maxRequeueDelay, 600s by default), whatever is declared here.
# 3 x 30s + 1h = 1h1m30s < 1h15m, but 3 x (30s + 10m) + 1h = 1h31m30s > 1h15m.
resource "google_pubsub_subscription" "refunds" {
  name                       = "refunds-sub"
  project                    = "acme-prod"
  topic                      = google_pubsub_topic.payments.id
  ack_deadline_seconds       = 60
  message_retention_duration = "4500s"

  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.payments_dlq.id
    max_delivery_attempts = 10
  }
}

# validate with no retry policy declared: Pub/Sub redelivers at once, so
# 5 x 1m + 1h = 1h5m is the bound, within 1h10m.
resource "google_pubsub_subscription" "invoices" {
  name                       = "invoices-sub"
  project                    = "acme-prod"
  topic                      = google_pubsub_topic.payments.id
  ack_deadline_seconds       = 60
  message_retention_duration = "4200s"

  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.payments_dlq.id
    max_delivery_attempts = 10
  }
}
