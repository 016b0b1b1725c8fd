"""An independent test corpus for the secret filter: credentials generated from the formats the providers
document, written without reading the filter's rules, so that it measures the filter against the world."""
