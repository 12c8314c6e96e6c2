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

resource "google_pubsub_subscription" "payments" {
  name                    = "payments-sub"
  project                 = var.project
  topic                   = google_pubsub_topic.payments.id
  ack_deadline_seconds    = 60
  enable_message_ordering = false

  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.payments_dlq.id
    max_delivery_attempts = 10
  }
}
