//! Client toolkit for MCP agent hosts. Not implemented yet: see the README.
