"""What pxq concludes from records: report tables and exports, compare, message distribution,
placement, tile profiles, peers' output, the published findings and the plausibility guards."""
