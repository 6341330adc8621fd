//! MCP conformance checker and interop tests. Not implemented yet: see the README.
