"""Text as users have it, around the search: paragraphs split into sentences, capitals,
inline markup and verbatim spans carried across by word alignment."""
