print("lnp")
