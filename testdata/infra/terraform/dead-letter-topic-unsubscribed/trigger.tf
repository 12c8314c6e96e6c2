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

# The dead-letter topic has no subscription: what the broker dead-letters
# there, and what brighter routes to deadLetterRoutingKey, is lost.
resource "google_pubsub_subscription" "payments" {
  name    = "payments-sub"
  project = var.project
  topic   = google_pubsub_topic.payments.id

  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.payments_dlq.id
    max_delivery_attempts = 10
  }
}
