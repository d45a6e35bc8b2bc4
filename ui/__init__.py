"""The Streamlit page's parts: widgets, layout and caching only, never a computation."""
