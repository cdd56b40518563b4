"""The cluster emulator (pxq cluster up): nodes as network namespaces on this machine
(`emulator`: bring-up, state, tear-down), their shaped links (`links`: profiles, tbf/htb),
the node holders and their state (`nodes`), and each node's cores (`cpusets`)."""
