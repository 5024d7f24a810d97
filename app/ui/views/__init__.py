"""The main window's views: node list and detail, Jobs, Settings. Each reads a NodeFacade and
re-reads it when the bridge says something changed."""
