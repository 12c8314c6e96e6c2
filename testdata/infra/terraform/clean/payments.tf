variable "project" {
  type    = string
  default = "acme-prod"
}

resource "google_pubsub_topic" "payments" {
  name    = "payments"
  project = var.project
}

resource "google_pubsub_topic" "payments_dlq" {
  name    = "payments-dlq"
  project = var.project
}

resource "google_pubsub_subscription" "payments_dlq" {
  name    = "payments-dlq-sub"
  project = var.project
  topic   = google_pubsub_topic.payments_dlq.id
}

resource "google_pubsub_subscription" "payments" {
  name                         = "payments-sub"
  project                      = var.project
  topic                        = google_pubsub_topic.payments.id
  ack_deadline_seconds         = 60
  enable_message_ordering      = false
  enable_exactly_once_delivery = false
  message_retention_duration   = "604800s"

  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.payments_dlq.id
    max_delivery_attempts = 10
  }

  retry_policy {
    minimum_backoff = "10s"
    maximum_backoff = "600s"
  }
}
