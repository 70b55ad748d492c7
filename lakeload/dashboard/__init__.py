"""`lakeload pipeline <name> show`: a local web dashboard of a pipeline (Streamlit), read with DuckDB."""
