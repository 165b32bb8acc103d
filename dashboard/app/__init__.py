"""The public, read-only Streamlit app over the parity views (`parity serve`).

The only package that imports streamlit. Each page is a thin layer over `frames` and
`charts`; filters live in the URL query string so any view can be shared; the store is
opened read-only and the app reads no token."""
