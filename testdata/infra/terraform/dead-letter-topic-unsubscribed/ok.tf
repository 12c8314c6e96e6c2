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
  name    = "payments-sub"
  project = var.project
  topic   = google_pubsub_topic.payments.id

  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.payments_dlq.id
    max_delivery_attempts = 10
  }
}

# The dead-letter topic's reader, named by the topic's full resource name:
# brighter dlq reads the subscription named like the topic.
resource "google_pubsub_subscription" "payments_dlq" {
  name    = "payments-dlq"
  project = var.project
  topic   = "projects/acme-prod/topics/payments-dlq"
}
