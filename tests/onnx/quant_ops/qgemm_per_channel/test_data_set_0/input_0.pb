
BaJ©§m÷ÀNÜ<½µ@H¹Xo¿ŠcC0DdùC(