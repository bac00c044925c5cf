module example.com/shapepoly

go 1.21
