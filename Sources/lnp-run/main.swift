print("lnp-run")
