"""The Gymnasium environments: one learning seat or team against given agents (``single_seat``)
and N games on the batched engine behind the vector-env APIs (``vector_env``)."""
